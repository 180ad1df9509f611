"""The tools around normops, beside the library (not imported by
``import normops``): the benchmark, the ONNX Runtime comparison, the ONNX
conformance run and the verify commands. ``python -m normops <command>``
runs them (see ``python -m normops --help``); the benchmark and
compare-ort need the ``bench`` extra, verify-platform the ``verify`` one."""
