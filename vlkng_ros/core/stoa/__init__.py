"""STOA: spatiotemporal object association of a chunk graph into the global graph.

The paper scores every (new, existing) object pair with an LLM and thresholds the similarity.
That cost grows with the graph. Here, for each new object of a chunk, a shortlist is drawn from
three indexed sources — the vector store (descriptor embedding, top-k), the graph store's spatial
index (objects near the triangulated position) and recency (objects of this tour seen in the last
``recent_s``) — capped at ``max_candidates``. Only the shortlist is judged: by the LLM in ONE
batched call per chunk when one is configured, else by a deterministic scorer (semantic, attribute
and spatial agreement). Decisions are one-to-one within a chunk (two detections of one chunk are
two objects: the VLM already grouped a chunk's detections). Work per chunk is therefore bounded
by (objects in the chunk) x (max_candidates), whatever the graph's size; the camera height
re-solve after the estimate moves is paged (``..calibration``) so it stays bounded too.

Modules: ``merger`` (StoaMerger: the steps, one transaction), ``association`` (placing,
shortlisting, the deterministic judge, assignment), ``judge`` (the LLM judge's prompt and schema),
``consolidation`` (node updates, earlier splits, naming by vote), ``vectors`` (descriptor and crop
embeddings), ``report`` (MergeReport).
"""

from .consolidation import object_id_for
from .merger import Association, StoaMerger
from .report import MergeReport

__all__ = ["Association", "MergeReport", "StoaMerger", "object_id_for"]
