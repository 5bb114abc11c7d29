"""rdma_vm_test: runs a plan of steps (and the binaries it names) inside the RDMA VM (vm.sh)."""

def rdma_vm_test(name, plan, bins = [], size = "large", tags = [], **kwargs):
    """A test that boots the VM and runs `plan`'s steps; `bins` are copied to the VM's $BIN.

    Args:
      name: the test's name.
      plan: the plan file ("name<TAB>timeout_s<TAB>command" lines).
      bins: binaries (labels) the plan runs as $BIN/<basename>.
      size: Bazel's test size (the VM needs minutes under TCG: large by default).
      tags: more tags (exclusive, local and rdma_vm are always set).
      **kwargs: passed to sh_test.
    """
    native.sh_test(
        name = name,
        size = size,
        srcs = ["//tests/rdma_vm:vm.sh"],
        args = ["$(location %s)" % plan] + ["$(location %s)" % b for b in bins],
        data = [
            plan,
            "//tests/rdma_vm:init",
            "//tests/rdma_vm:finish.sh",
            "//tests/rdma_vm:guest.sh",
        ] + bins,
        tags = ["exclusive", "local", "rdma_vm"] + tags,
        **kwargs
    )

# Benchmarks measure the optimized build: under TCG an unoptimized (fastbuild) binary's own
# instructions were half of mpigpu's 8-byte latency
# (benchmarks/results/2026-11-25-ib-latency-softroce-vm).
def _opt_transition_impl(settings, attr):
    return {"//command_line_option:compilation_mode": "opt"}

_opt_transition = transition(
    implementation = _opt_transition_impl,
    inputs = [],
    outputs = ["//command_line_option:compilation_mode"],
)

def _opt_binary_impl(ctx):
    src = ctx.attr.binary[0][DefaultInfo].files_to_run.executable
    out = ctx.actions.declare_file(ctx.attr.name + "/" + src.basename)
    ctx.actions.run_shell(
        inputs = [src],
        outputs = [out],
        command = "cp -L '%s' '%s'" % (src.path, out.path),
        mnemonic = "OptBinary",
    )
    return [DefaultInfo(files = depset([out]), executable = out)]

opt_binary = rule(
    implementation = _opt_binary_impl,
    doc = "`binary` built with -c opt whatever the build's mode, under its own base name.",
    attrs = {
        "binary": attr.label(cfg = _opt_transition, executable = True, mandatory = True),
        "_allowlist_function_transition": attr.label(
            default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
        ),
    },
    executable = True,
)
