"""The operator registry and the generic entry point ``run``.

One ``OpDef`` per (domain, op_type). A requested opset resolves to the
newest ``since_version`` of the operator that is not above it, as ONNX
resolves a node's schema.
"""
import bisect
import operator
from collections.abc import Mapping

import numpy as np

from . import _config, _isa
from ._errors import InvalidInputError, UnsupportedError

#: The newest default-domain opset this build knows (onnx 1.22).
MAX_OPSET = 27

_DOMAIN_ALIASES = {"": "", "ai.onnx": "", "com.microsoft": "com.microsoft"}
_REGISTRY = {}
_DEFAULT_DOMAIN = {}  # op_type -> OpDef of the default domain (run's quick lookup)
_DIRECTS_KEPT = 32  # attribute sets whose straight call one OpDef keeps (searched in turn)


def _domain(domain, op_type):
    try:
        return _DOMAIN_ALIASES[domain]
    except (KeyError, TypeError):
        raise UnsupportedError(f"{op_type}: domain {domain!r} is not served") from None


class OpDef:
    """An ONNX operator as normops serves it.

    ``bind(op, version, inputs, attributes)`` validates and returns a plan;
    ``compute(plan, mode, n_threads, all_outputs)`` runs the kernels and
    ``reference(plan)`` the executable specification; both return the list
    of outputs (``compute`` may leave trailing optional outputs out when
    ``all_outputs`` is false). ``direct(op, version, attributes,
    n_declared)``, optional, gives the straight route to the kernels for one
    attribute set, fixed once and kept (by ``normops.run`` per set seen, by a
    model node at load time): a function ``direct(kernels, threads, fast,
    *inputs)`` returning the outputs, or None when these inputs need the
    validated route (it never raises); or None when the attributes always
    do. ``check_node(version, attributes, outputs)``, optional, checks a
    model node at load time (returns the reason a form is not served, or
    None); ``node_attributes(version, attributes, outputs)``, optional,
    returns the attributes a model node runs with when its declared outputs
    select a form (BatchNormalization before opset 14).
    """

    def __init__(self, op_type, *, versions, inputs, n_required, outputs, attributes,
                 bind, compute, reference, domain="", direct=None, check_node=None, node_attributes=None):
        self.op_type = op_type
        self.domain = domain
        self.versions = tuple(sorted(versions))
        self.inputs = tuple(inputs)
        self._n_inputs = len(self.inputs)
        self.n_required = n_required
        self.outputs = tuple(outputs)
        self._n_outputs = len(self.outputs)
        self._later_required = tuple(range(1, n_required))  # inputs[0] is checked first
        self._attributes = attributes
        self.bind = bind
        self.compute = compute
        self.reference = reference
        self.direct = direct
        self.check_node = check_node
        self.node_attributes = node_attributes
        self._version_cache = {}
        self._defaults = {}  # version -> name -> default (shared, never modified)
        self._directs = []  # (version, attributes as given, direct's function or None): route.pxi

    def __repr__(self):
        return f"OpDef({self.domain or 'ai.onnx'}::{self.op_type}, versions={self.versions})"

    def attributes(self, version):
        """name -> default of the attributes at ``version``."""
        attrs = self._attributes
        return attrs(version) if callable(attrs) else attrs

    def version_for(self, opset):
        """The since_version serving ``opset`` (None: the newest)."""
        if opset is not None and type(opset) is not int:
            if isinstance(opset, (bool, np.bool_)):
                raise InvalidInputError(f"{self.op_type}: argument 'opset' must be an integer, not {opset!r}")
            try:
                opset = operator.index(opset)  # NumPy integers
            except TypeError:
                raise InvalidInputError(
                    f"{self.op_type}: argument 'opset' must be an integer, not {opset!r}") from None
        try:
            return self._version_cache[opset]
        except KeyError:
            pass
        if opset is None:
            version = self.versions[-1]
        else:
            if opset > MAX_OPSET and self.domain == "":
                raise UnsupportedError(
                    f"{self.op_type}: opset {opset} is newer than this build knows ({MAX_OPSET})")
            i = bisect.bisect_right(self.versions, opset)
            if i == 0:
                raise UnsupportedError(
                    f"{self.op_type}: not defined at opset {opset} (first version: {self.versions[0]})")
            version = self.versions[i - 1]
        self._version_cache[opset] = version
        self._version_cache.setdefault(version, version)  # the direct routes take a resolved version
        return version

    def defaults(self, version):
        """The attributes at ``version`` with their defaults, computed once
        (callers must not modify the dict)."""
        try:
            return self._defaults[version]
        except KeyError:
            defaults = self._defaults[version] = dict(self.attributes(version))
            return defaults

    def fill_attributes(self, version, attributes):
        """Defaults completed by the given attributes; unknown names refused."""
        defaults = self.defaults(version)
        if not attributes:
            return dict(defaults)
        unknown = [name for name in attributes if name not in defaults]
        if unknown:
            known = ", ".join(defaults) or "none"
            raise InvalidInputError(
                f"{self.op_type}: unknown attribute {unknown[0]!r} at opset {version} (known: {known})")
        filled = dict(defaults)
        filled.update(attributes)
        return filled

    def pad_inputs(self, inputs):
        """The inputs as a list with one entry per ONNX input (None = absent)."""
        # a mapping would give its keys, an array its rows: refused, not guessed
        if inputs is None or isinstance(inputs, (Mapping, np.ndarray, str, bytes)):
            raise InvalidInputError(f"{self.op_type}: argument 'inputs' must be a list or tuple of arrays in "
                                    f"ONNX order ({', '.join(self.inputs)}), not {type(inputs).__name__}")
        try:
            inputs = list(inputs)
        except TypeError:
            raise InvalidInputError(f"{self.op_type}: argument 'inputs' must be a list or tuple of arrays, "
                                    f"not {type(inputs).__name__}") from None
        if len(inputs) > len(self.inputs):
            raise InvalidInputError(
                f"{self.op_type}: takes at most {len(self.inputs)} inputs ({', '.join(self.inputs)}), "
                f"got {len(inputs)}")
        inputs.extend([None] * (len(self.inputs) - len(inputs)))
        for i in range(self.n_required):
            if inputs[i] is None:
                raise InvalidInputError(f"{self.op_type}: input {self.inputs[i]!r} is required")
        return inputs

    def call(self, inputs, attributes, opset, mode, n_threads, all_outputs=True):
        """Validated kernel call; ``attributes`` must already hold every name."""
        version = self.version_for(opset)
        mode = _config.resolve_mode(mode, self.op_type)
        n_threads = _config.kernel_threads(n_threads, self.op_type)
        plan = self.bind(self, version, inputs, attributes)
        return self.compute(plan, mode, n_threads, all_outputs)

    def run(self, inputs, attributes, opset, mode, n_threads):
        # The common call (an int opset seen before, a list or tuple of the
        # inputs, an attribute set seen before) takes the kernels' straight
        # route (route.pxi: the kept direct function, found in C);
        # anything else goes to the checks that raise the errors.
        outputs = _isa.routes.run_direct(self, inputs, attributes, opset, mode, n_threads)
        return outputs if outputs is not None else self.run_checked(inputs, attributes, opset, mode, n_threads)

    def run_checked(self, inputs, attributes, opset, mode, n_threads):
        """``run`` for a call its straight route did not take."""
        routes = _isa.routes
        version = self.version_for(opset)
        if (type(inputs) is tuple or type(inputs) is list) and len(inputs) == self._n_inputs:
            if inputs[0] is None:
                inputs = self.pad_inputs(inputs)  # raises
            else:
                for i in self._later_required:
                    if inputs[i] is None:
                        inputs = self.pad_inputs(inputs)  # raises
        else:
            inputs = self.pad_inputs(inputs)
        # The kernels straight, as a model node of these attributes would
        # call them: the direct hook's function, made once per attribute set.
        given, direct = attributes, None
        if self.direct is not None and (attributes is None or type(attributes) is dict):
            direct = routes.find_direct(self._directs, version, attributes)
        defaults = self._defaults.get(version) or self.defaults(version)
        if not attributes and (attributes is None or type(attributes) is dict):
            attributes = defaults
        elif type(attributes) is dict and attributes.keys() <= defaults.keys():
            attributes = {**defaults, **attributes}
        else:
            attributes = self.fill_attributes(version, attributes)
        if direct is routes.route_unseen():  # known attribute names: keep this set's straight call
            direct = self.direct(self, version, attributes, len(self.outputs))
            routes.keep_direct(self._directs, version, given, direct, _DIRECTS_KEPT)
        if direct is not None:  # the straight route on the inputs as padded (a short list)
            outputs = routes.run_direct(self, inputs, given, version, mode, n_threads)
            if outputs is not None:
                return outputs
        return self.call(inputs, attributes, version, mode, n_threads)

    def run_reference(self, inputs, attributes, opset, mode=None, n_threads=None):
        version = self.version_for(opset)
        _config.check_n_threads(n_threads, self.op_type)  # accepted for symmetry, unused
        if mode is not None and _config.check_mode(mode, self.op_type) != "exact":
            raise UnsupportedError(f"{self.op_type}: the reference models the exact flavour only")
        plan = self.bind(self, version, self.pad_inputs(inputs), self.fill_attributes(version, attributes))
        return self.reference(plan)


def register(op):
    key = (op.domain, op.op_type)
    if key in _REGISTRY:
        raise RuntimeError(f"{op!r} registered twice")
    _REGISTRY[key] = op
    if op.domain == "":
        _DEFAULT_DOMAIN[op.op_type] = op
    return op


def lookup(op_type, domain=""):
    """The OpDef of an operator, or UnsupportedError."""
    key = (_domain(domain, op_type), op_type)
    try:
        return _REGISTRY[key]
    except KeyError:
        raise UnsupportedError(
            f"{op_type}: operator not served (domain {domain or 'ai.onnx'!r})") from None


def is_served(domain, op_type, opset):
    """True when ``op_type`` of ``domain`` is served at ``opset``."""
    try:
        lookup(op_type, domain).version_for(opset)
    except (UnsupportedError, InvalidInputError):
        return False
    return True


def served_operators():
    """Every served operator as (domain, op_type), sorted."""
    return sorted(_REGISTRY)


def run(op_type, inputs, attributes=None, *, opset=None, domain="", mode=None, n_threads=None):
    """Run one ONNX operator and return the list of all its outputs.

    ``inputs`` are in ONNX order (None for an absent optional input, and
    trailing optional inputs may be left out); ``attributes`` maps ONNX
    attribute names to Python values (missing ones take ONNX's defaults).
    ``opset`` is the model's opset for the operator's domain (None: the
    newest). ``mode`` is "exact" or "fast"; ``n_threads`` a positive int.
    """
    try:
        op = _DEFAULT_DOMAIN[op_type] if domain == "" else _REGISTRY[(_DOMAIN_ALIASES[domain], op_type)]
    except (KeyError, TypeError):
        op = lookup(op_type, domain)  # the error
    outputs = _isa.routes.run_direct(op, inputs, attributes, opset, mode, n_threads)  # OpDef.run, inline
    return outputs if outputs is not None else op.run_checked(inputs, attributes, opset, mode, n_threads)
