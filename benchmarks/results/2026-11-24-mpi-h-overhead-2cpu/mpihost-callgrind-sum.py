# Per-iteration / per-call inclusive Ir of mpi_overhead_bench self loops (callgrind_annotate --tree=calling).
import re,subprocess,sys
# Per-call inclusive Ir of the loop functions and their direct callees (callgrind --tree=calling).
out=subprocess.run(["callgrind_annotate","--inclusive=yes","--tree=calling",sys.argv[1]],capture_output=True,text=True).stdout
blocks=out.split("\n\n")
loops={"SelfMpi(":None,"SelfCore(":None,"SelfMpiNb(":None,"SelfCoreNb(":None}
iters=int(sys.argv[2]) if len(sys.argv)>2 else 4000
for b in blocks:
    lines=[l for l in b.strip().split("\n") if l.strip()]
    if not lines: continue
    head=lines[0]
    m0=re.search(r"::(Self\w+)\(",head)
    for k in ([m0.group(1)+"("] if m0 and "*" in head else []):
        if True:
            tot=int(head.split()[0].replace(",",""))
            print(f"{k[:-1]:12s} {tot/iters:8.1f} per iteration")
            for l in lines[1:]:
                m=re.match(r"\s*([\d,]+) .*>\s+\S+?:(.*?) \(([\d,]+)x\)",l)
                if m:
                    c=int(m.group(1).replace(",","")); n=int(m.group(3).replace(",",""))
                    name=m.group(2)
                    name=re.sub(r"\(.*","",name)
                    print(f"    {name:40s} {c/n:8.1f} per call ({n}x)")
