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
