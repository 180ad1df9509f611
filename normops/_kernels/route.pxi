# normops.run's straight route to the kernels (normops/_registry.py,
# OpDef.run). A model node's direct function (an OpDef's direct hook, made
# once per operator version and attribute set) is kept in the OpDef's
# ``_directs`` list as (version, attributes as given, function or None);
# here a call finds its entry and runs the function, in C, because on
# small inputs the lookups are most of the call. Anything this route does
# not take (an unseen attribute set, settings that are not valid by type,
# inputs the function declines) returns None, and OpDef.run's validated
# path takes the call: the only place errors are raised.

# where an attribute set was not seen (None: seen, and never direct)
cdef object ROUTE_UNSEEN = object()
cdef dict NO_ATTRIBUTES = {}
# set at the first call (normops is imported by then): normops._config and
# its MAX_THREADS
cdef object CONFIG = None
cdef Py_ssize_t ROUTE_MAX_THREADS = 0
# the ISA build the calls go to (use_kernels), which direct functions take
# as ``kernels``, and its table
cdef KernelBuild BUILD = None
cdef KernelTable* KERNELS = NULL
# types of the attribute values an entry may keep: their == is a plain
# comparison, and with the types compared first -1.0 or True never stand
# for -1 or 1; lists and tuples of ints too (the axes of older opsets),
# element by element
cdef tuple KEPT_VALUE_TYPES = (int, float, str, bytes)


cdef bint ints_only(object values):
    for v in values:
        if type(v) is not int:
            return False
    return True


cdef bint same_value(object value, object other):
    cdef Py_ssize_t i
    if type(value) is not type(other):
        return False
    if value is other:
        return True
    if type(value) is list or type(value) is tuple:
        if len(value) != len(other) or not ints_only(value):
            return False
        for i in range(len(value)):
            if value[i] != other[i]:
                return False
        return True
    return value == other


cdef bint same_attributes(dict kept, dict given):
    """given has kept's names, and values of the same types, equal."""
    cdef object name, value
    if len(kept) != len(given):
        return False
    for name, value in given.items():
        if not same_value(value, kept.get(name, ROUTE_UNSEEN)):
            return False
    return True


cdef bint keepable(dict given):
    """Whether an attribute set's values are of the types an entry keeps."""
    for value in given.values():
        if type(value) is list or type(value) is tuple:
            if not ints_only(value):
                return False
        elif type(value) not in KEPT_VALUE_TYPES:
            return False
    return True


def find_direct(list entries, object version, object attributes):
    """The kept direct function of this version and attribute set: the
    function; None (seen and not direct, or a set that cannot be kept:
    the validated route takes it); or ROUTE_UNSEEN (to be made and kept)."""
    cdef dict given = NO_ATTRIBUTES if attributes is None else <dict>attributes
    cdef tuple entry
    for entry in entries:
        if entry[0] == version and same_attributes(<dict>entry[1], given):
            return entry[2]
    return ROUTE_UNSEEN if keepable(given) else None


def route_unseen():
    """The marker find_direct returns for an attribute set not kept."""
    return ROUTE_UNSEEN


def keep_direct(list entries, object version, object attributes, object direct, Py_ssize_t most):
    """Keep the direct function (None: not direct) of an attribute set
    find_direct called unseen; at most ``most`` entries (then cleared)."""
    cdef dict given = NO_ATTRIBUTES if attributes is None else <dict>attributes
    cdef dict kept = {}
    if not keepable(given):
        return
    for name, value in given.items():
        # lists and tuples copied: the caller's list may change
        kept[name] = type(value)(value) if type(value) is list or type(value) is tuple else value
    if len(entries) >= most:
        del entries[:]
    entries.append((version, kept, direct))


def use_kernels(KernelBuild build):
    """Send every route to this ISA build (normops._isa, at import and in
    its use() blocks)."""
    global BUILD, KERNELS
    KERNELS = build.table  # KernelBuild gave it the process's team state
    BUILD = build
    use_team_state(KERNELS)


cdef route_setup():
    global CONFIG, ROUTE_MAX_THREADS, GLOBAL_CONFIG, THREAD_LOCAL
    from normops import _config  # importing normops ran use_kernels (normops._isa)
    ROUTE_MAX_THREADS = _config.MAX_THREADS
    GLOBAL_CONFIG = _config._global_config
    THREAD_LOCAL = _config._thread_local
    CONFIG = _config


# _config's state, read in place: set_config's dict and the holder of each
# thread's config() overrides (neither object is ever replaced)
cdef dict GLOBAL_CONFIG = None
cdef object THREAD_LOCAL = None


cdef struct CallSettings:
    int threads   # as _config.kernel_threads gives it: n > 0 a per-call count, -k the configured k, 0 OpenMP's
    bint fast


cdef int settle_call(object mode, object n_threads, CallSettings* out) except -2:
    """The kernel thread count and flavour of a call whose mode and
    n_threads pass their checks by type alone (mode None, "exact" or
    "fast"; n_threads None or an int in range), the calling thread's
    config() overrides and set_config filling in what is None: 0, with
    *out set; else -1, and the validated path checks them (the only place
    errors come from). A C struct, not a tuple: on a 4x8 input the tuple
    and its two ints were a tenth of the named call."""
    cdef object overrides
    if not (mode is None or (type(mode) is str and (mode == "exact" or mode == "fast"))):
        return -1
    if mode is None or n_threads is None:
        overrides = getattr(THREAD_LOCAL, "overrides", None)
        if overrides is None:
            overrides = NO_ATTRIBUTES
        if mode is None:
            mode = (<dict>overrides).get("mode", GLOBAL_CONFIG["mode"])
        if n_threads is None:
            n_threads = (<dict>overrides).get("n_threads", GLOBAL_CONFIG["n_threads"])
            out.threads = 0 if n_threads is None else -<int>n_threads
            out.fast = mode == "fast"
            return 0
    if type(n_threads) is int and 1 <= n_threads <= ROUTE_MAX_THREADS:
        out.threads = <int>n_threads
        out.fast = mode == "fast"
        return 0
    return -1


cdef object call_settings(object mode, object n_threads):
    """settle_call's result as (kernel thread count, whether the flavour is
    fast), or None, for the routes that pass them on to Python."""
    cdef CallSettings settings
    if settle_call(mode, n_threads, &settings) < 0:
        return None
    return settings.threads, settings.fast


def direct_settings(object mode, object n_threads):
    """call_settings for the direct routes written in Python."""
    if CONFIG is None:
        route_setup()
    return call_settings(mode, n_threads)


def run_direct(object op, object inputs, object attributes, object opset, object mode, object n_threads):
    """All the outputs of ``op`` on this call by its kept direct function,
    or None when OpDef.run's validated path must take the call."""
    cdef object version, direct, outputs, settings
    cdef Py_ssize_t i, n_outputs, n_given
    if CONFIG is None:
        route_setup()
    if not (opset is None or type(opset) is int):
        return None
    version = (<dict>op._version_cache).get(opset)
    if version is None:
        return None
    if not (type(inputs) is list or type(inputs) is tuple):
        return None
    n_given = len(inputs)
    if n_given != op._n_inputs:
        # trailing optional inputs left out: absent (None)
        if not op.n_required <= n_given < op._n_inputs:
            return None
        inputs = list(inputs) + [None] * (op._n_inputs - n_given)
    if inputs[0] is None:
        return None
    for i in op._later_required:
        if inputs[i] is None:
            return None
    if not (attributes is None or type(attributes) is dict):
        return None
    direct = find_direct(op._directs, version, attributes)
    if direct is None or direct is ROUTE_UNSEEN:
        return None
    settings = call_settings(mode, n_threads)
    if settings is None:
        return None
    outputs = direct(BUILD, settings[0], settings[1], *inputs)
    if outputs is None:
        return None
    n_outputs = op._n_outputs
    return list(outputs) if len(outputs) == n_outputs else list(outputs[:n_outputs])
