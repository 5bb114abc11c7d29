# Table of mpihost-ab.sh runs: per build, the median over runs of each run's medians and ratio.
import glob,re,statistics,sys
d=sys.argv[1]
rows={}
for f in sorted(glob.glob(d+"/run*-*.txt")):
    b=re.search(r"run\d+-(\w+)\.txt",f).group(1)
    for l in open(f):
        p=l.split()
        if len(p)==4 and p[0].isdigit():
            rows.setdefault((b,int(p[0])),[]).append((float(p[1]),float(p[2]),float(p[3])))
sizes=sorted({k[1] for k in rows})
print("| bytes | old: mpigpu.h µs | old: mpi.h µs | old ratio: median (each run) | new: mpigpu.h µs | new: mpi.h µs | new ratio: median (each run) |")
print("|---:|---:|---:|---|---:|---:|---|")
for s in sizes:
    out=[str(s)]
    for b in ("old","new"):
        v=rows.get((b,s),[])
        a=statistics.median([x[0] for x in v]); m=statistics.median([x[1] for x in v]); r=statistics.median([x[2] for x in v])
        out+= [f"{a:.3f}",f"{m:.3f}",f"**{r:.2f}** ("+" ".join(f"{x[2]:.2f}" for x in v)+")"]
    print("| "+" | ".join(out)+" |")
