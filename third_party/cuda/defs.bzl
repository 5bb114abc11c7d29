"""cuda_library: compiles .cu files with nvcc and yields a cc_library that cc rules link.

nvcc builds SASS for sm_90 (H100/H200) plus compute_90 PTX, so the code runs on Hopper and is
JIT-compiled on later GPUs. Objects are position independent so they link into shared libraries.
"""

CUDA_HOME = "/usr/local/cuda"

NVCC_FLAGS = [
    "-std=c++17",
    "-O3",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
    "-Xcompiler=-fPIC",
    "-Xcompiler=-Wall",
    # nvcc's front end warns that [[nodiscard]] on a class (mpigpu::Status) is "ignored" on
    # functions returning it; gcc honours it, so the warning is noise here.
    "-diag-suppress=2810",
]

def cuda_library(name, srcs, hdrs = [], deps = [], cu_deps = [], visibility = None, testonly = False):
    """A library of CUDA sources.

    Args:
      name: the cc_library's name.
      srcs: .cu files.
      hdrs: headers of this library (public, also seen by nvcc).
      deps: cc deps of the resulting library (linked, and their headers given to nvcc through
        cu_deps where a .cu includes them).
      cu_deps: header files or filegroups from other packages that the .cu files include.
      visibility: as for cc_library.
      testonly: as for cc_library.
    """
    objs = []
    for src in srcs:
        stem = src.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        obj = "_cu/%s/%s.o" % (name, stem)
        native.genrule(
            name = "%s_%s_nvcc" % (name, stem),
            srcs = [src] + hdrs + cu_deps,
            outs = [obj],
            cmd = " ".join([CUDA_HOME + "/bin/nvcc"] + NVCC_FLAGS + [
                "-I.",
                "-I$(GENDIR)",
                "-c",
                "$(location %s)" % src,
                "-o",
                "$@",
            ]),
            testonly = testonly,
            message = "nvcc " + src,
        )
        objs.append(obj)
    native.cc_library(
        name = name,
        srcs = objs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart"],
        visibility = visibility,
        testonly = testonly,
        alwayslink = True,
    )
