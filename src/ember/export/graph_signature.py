"""The parts of an exported program's signature (``torch.export.graph_signature``): each
placeholder of the graph is an :class:`InputSpec` (its :class:`InputKind`, its name, and the
state it is bound to), each output an :class:`OutputSpec`."""
import dataclasses
import enum

__all__ = ["InputKind", "OutputKind", "TensorArgument", "InputSpec", "OutputSpec"]


class InputKind(enum.Enum):
    """What a placeholder of an exported graph takes (torch's kinds and values)."""
    USER_INPUT = 1
    PARAMETER = 2
    BUFFER = 3
    CONSTANT_TENSOR = 4
    CUSTOM_OBJ = 5
    TOKEN = 6


class OutputKind(enum.Enum):
    """What an output of an exported graph is (torch's kinds and values; ember's exported
    forwards give ``USER_OUTPUT`` only)."""
    USER_OUTPUT = 1
    LOSS_OUTPUT = 2
    BUFFER_MUTATION = 3
    PARAMETER_MUTATION = 4
    GRADIENT_TO_PARAMETER = 5
    GRADIENT_TO_USER_INPUT = 6
    USER_INPUT_MUTATION = 7
    TOKEN = 8


@dataclasses.dataclass
class TensorArgument:
    """A value of the graph, by its node's name."""
    name: str


@dataclasses.dataclass
class InputSpec:
    """A placeholder: its ``kind``, ``arg`` (its name), ``target`` (the qualified name of the
    parameter, buffer or constant it takes; None for a user input) and, for a buffer,
    ``persistent`` (whether ``state_dict`` holds it)."""
    kind: InputKind
    arg: TensorArgument
    target: str = None
    persistent: bool = None

    def __str__(self):
        target = "" if self.target is None else f" target={self.target!r}"
        persistent = "" if self.persistent is None else f" persistent={self.persistent}"
        return f"{self.arg.name}: {self.kind.name}{target}{persistent}"


@dataclasses.dataclass
class OutputSpec:
    """An output: its ``kind``, ``arg`` (its node's name) and ``target`` (None for a user output)."""
    kind: OutputKind
    arg: TensorArgument
    target: str = None

    def __str__(self):
        target = "" if self.target is None else f" target={self.target!r}"
        return f"{self.arg.name}: {self.kind.name}{target}"
