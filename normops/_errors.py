"""The two exceptions normops raises for bad or unserved input."""


class InvalidInputError(ValueError):
    """An input, attribute or axis that the operator does not accept.

    The message starts with the operator name and names the argument.
    """


class UnsupportedError(NotImplementedError):
    """A valid request that normops does not serve (an opset, a dtype...).

    The message starts with the operator name and says what is not served.
    """
