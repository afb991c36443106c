"""ganeval's protocol as torchmetrics Metrics: `Protocol` (any registered metrics, with intervals over subsamples)
and `IMD`, fed batch by batch in a training loop and gathered across DDP ranks (`pip install ganeval[torchmetrics]`).
"""

from ganeval.features.pretrained import import_extra

import_extra("torchmetrics", "torchmetrics", "ganeval.torchmetrics")

# after the one-line install hint when torchmetrics is missing
from ganeval.torchmetrics.metric import IMD, Protocol  # noqa: E402

__all__ = ["IMD", "Protocol"]
