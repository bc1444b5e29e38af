"""precprobe's PyTorch bridge: judge your own kernel (attention, GEMM) against the exact answer
and precprobe's emulated variants, from Python. Calls the precprobe CLI (found through
$PRECPROBE_BIN, PATH, or the repository's bin/precprobe).

    case = precprobe.capture("my-attn", my_attention, {"q": q, "k": k, "v": v}, "out/")
    stats = precprobe.judge(case)          # a dict per comparison
"""
from ._bin import PrecprobeError, find_binary
from ._tensors import Tensor, load_safetensors, save_safetensors
from ._capture import capture
from ._judge import Judgement, judge, read_report
from ._assertion import PrecisionError, assert_precision

__all__ = ["capture", "judge", "assert_precision", "Judgement", "PrecisionError", "PrecprobeError",
           "Tensor", "find_binary", "load_safetensors", "read_report", "save_safetensors"]
__version__ = "0.1.0"
