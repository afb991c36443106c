"""The registry's variants: a registered extractor class under another name with preset options (its identity keeps
the class's name; the options it records tell the variants apart), each with what the registry declares of it."""

from __future__ import annotations

from ganeval.features.base import add_variant
from ganeval.features.clip import ClipExtractor
from ganeval.features.inception import RESIZE_MODES, InceptionExtractor

add_variant("inception_spatial", InceptionExtractor, {"output": "spatial"}, dims=(2023,), resize=tuple(RESIZE_MODES),
            weights=True, help="the Inception's Mixed_6d spatial features (7×17×17, the ADM evaluator's), for sfid")
add_variant("inception_logits", InceptionExtractor, {"output": "logits_unbiased"}, dims=(1008,),
            resize=tuple(RESIZE_MODES), weights=True,
            help="the Inception's 1008 class logits without the bias (torch-fidelity's), for inception_score")
add_variant("clip_l14_336", ClipExtractor, {"arch": "ViT-L-14-336", "pretrained": "openai"}, dims=(768,), weights=True,
            help="CLIP ViT-L/14 at 336 px (OpenAI), the embedding cmmd's reference uses")
