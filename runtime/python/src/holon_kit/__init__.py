"""The runtime of a Holon agent in Python: `serve(run)`, `Ctx` (`ctx.fail`, `ctx.download`),
and the function mode `holon-test` calls the agent through, at the kit's version."""

__version__ = "0.2.0"

from ._ctx import Ctx, Failure  # noqa: E402
from ._files import DownloadError  # noqa: E402
from ._entry import serve  # noqa: E402

__all__ = ["Ctx", "DownloadError", "Failure", "__version__", "serve"]
