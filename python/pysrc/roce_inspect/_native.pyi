# Type stubs of the Rust extension (python/src/*.rs). Checked by mypy in CI (.ci/run).
from typing import Any, Dict, Iterator, List, Optional, Tuple, Union
import os

from typing_extensions import Self, final

__all__ = [
    "CaptureError",
    "OptionError",
    "CaptureWarning",
    "__version__",
    "SCHEMA_FRAME",
    "SCHEMA_STATS",
    "SCHEMA_CHECK",
    "parse",
    "parse_udp_payload",
    "Reader",
    "BatchReader",
    "Lease",
    "packet_columns",
    "finding_columns",
    "stats",
    "check",
    "Checker",
    "check_group",
]

__version__: str
SCHEMA_FRAME: str
SCHEMA_STATS: str
SCHEMA_CHECK: str

class CaptureError(Exception):
    file: str
    frame: Optional[int]
    offset: int
    kind: str

class OptionError(ValueError): ...
class CaptureWarning(UserWarning): ...

_Source = Union[str, "os.PathLike[str]", Any]
# (name, type, validity, values, offsets): one column of a batch as Arrow buffers.
_Column = Tuple[str, str, Optional[bytes], Union[bytes, Tuple[int, int]], Optional[bytes]]

def parse(
    frame: bytes,
    port: Union[int, List[int], None] = None,
    *,
    link_type: int = 1,
    ts_ns: int = 0,
    number: int = 1,
    len: Optional[int] = None,
) -> Dict[str, Any]: ...
def parse_udp_payload(payload: bytes, *, ts_ns: int = 0, number: int = 1) -> Dict[str, Any]: ...
def packet_columns(raw: bool = False) -> List[Tuple[str, str, bool, str]]: ...
def finding_columns() -> List[Tuple[str, str, bool, str]]: ...
# stats() and check() also read several taps' captures as one: a list or tuple of paths.
_Sources = Union[_Source, List[Union[str, "os.PathLike[str]"]], Tuple[Union[str, "os.PathLike[str]"], ...]]

def stats(source: _Sources, **options: Any) -> Dict[str, Any]: ...
def check(source: _Sources, **options: Any) -> Dict[str, Any]: ...
def check_group(
    frames: List[bytes],
    numbers: List[int],
    ts_ns: List[int],
    lens: List[int],
    link_types: List[int],
    end_ns: int,
    **options: Any,
) -> Tuple[int, List[Any]]: ...

@final
class Reader(Iterator[Dict[str, Any]]):
    def __new__(cls, source: _Source, **options: Any) -> Self: ...
    def __iter__(self) -> "Reader": ...
    def __next__(self) -> Dict[str, Any]: ...
    @property
    def name(self) -> str: ...
    @property
    def warnings(self) -> List[str]: ...

@final
class BatchReader(Iterator[Tuple[int, List[_Column], Optional["Lease"]]]):
    def __new__(
        cls,
        source: _Source,
        columns: Optional[List[str]] = None,
        batch_size: int = 65536,
        raw: bool = False,
        lend: bool = False,
        **options: Any,
    ) -> Self: ...
    def __iter__(self) -> "BatchReader": ...
    def __next__(self) -> Tuple[int, List[_Column], Optional["Lease"]]: ...
    @property
    def warnings(self) -> List[str]: ...

@final
class Lease: ...

@final
class Checker:
    def __new__(cls, **options: Any) -> Self: ...
    def feed(
        self,
        frame: bytes,
        ts_ns: int,
        *,
        number: Optional[int] = None,
        len: Optional[int] = None,
        link_type: int = 1,
    ) -> None: ...
    def tick(self, ts_ns: int) -> None: ...
    def findings(self) -> List[Dict[str, Any]]: ...
    def finish(self) -> Dict[str, Any]: ...
