"""``python -m normops <command>``: info, conformance, compare-ort, bench, ..."""
import argparse
import sys


def _info(argv):
    import normops

    parser = argparse.ArgumentParser(prog="python -m normops info", description="Show the build and runtime facts.")
    parser.parse_args(argv)
    normops.show_config()
    return 0


def _conformance(argv):
    from normops_tools import conformance

    return conformance.main(argv)


def _bench(argv):
    from normops_tools import benchmark

    return benchmark.main(argv)


def _verify_transcendentals(argv):
    from normops_tools import verify_transcendentals

    return verify_transcendentals.main(argv)


def _verify_platform(argv):
    from normops_tools import verify_platform

    return verify_platform.main(argv)


def _compare_ort(argv):
    from normops_tools import compare_ort

    return compare_ort.main(argv)


def _run_model(argv):
    from normops.onnx import _cli

    return _cli.main(argv)


COMMANDS = {
    "info": (_info, "show the build: version, ISA level, OpenMP, threads"),
    "conformance": (_conformance, "run the ONNX backend node tests and write docs/conformance.md"),
    "bench": (_bench, "benchmark normops against ONNX Runtime, NumPy and PyTorch"),
    "verify-transcendentals": (_verify_transcendentals,
                               "check exp32/log32/log1p32 (and erf32, tanh32) on all 2^32 inputs and print their digests"),
    "verify-platform": (_verify_platform,
                        "cross-build for aarch64, run under qemu and compare the exact bits with this machine's"),
    "compare-ort": (_compare_ort, "compare every served operator with ONNX Runtime on randomized cases"),
    "run-model": (_run_model, "load an ONNX model with normops.onnx; describe it or run it on .npy inputs"),
}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        print("usage: python -m normops {" + ",".join(COMMANDS) + "} [options]\n")
        for name, (_, help_text) in COMMANDS.items():
            print(f"  {name:<23} {help_text}")
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    command, rest = argv[0], argv[1:]
    return COMMANDS[command][0](rest)


if __name__ == "__main__":
    sys.exit(main())
