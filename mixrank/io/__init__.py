"""Stage io: readers to the canonical long schema and dataset loaders.

Modules:

* :mod:`~mixrank.io.read` -- one entry point for every input format, with a
  registry of readers;
* readers: :mod:`~mixrank.io.lm_eval` (lm-evaluation-harness per-sample logs,
  whose files :mod:`~mixrank.io.lm_eval_logs` finds), :mod:`~mixrank.io.inspect_logs`
  (Inspect logs), :mod:`~mixrank.io.helm` (HELM output folders),
  :mod:`~mixrank.io.lighteval` (lighteval details), :mod:`~mixrank.io.wide`
  (wide items x models matrices), :mod:`~mixrank.io.pass_at_k` (k-of-n samples
  to per-item pass@k); helpers shared by the harness readers in
  :mod:`~mixrank.io._harness`;
* :mod:`~mixrank.io.datasets` -- locating and loading the bundled datasets;
* :mod:`~mixrank.io.sources` -- what a data source is (table, file, parquet
  files, Dask DataFrame);
* :mod:`~mixrank.io.backends` -- out-of-core and distributed aggregation to
  (model, cell) cells and the frame built from them; the backends
  :mod:`~mixrank.io.backend_duckdb` (with its compressed output
  :mod:`~mixrank.io.backend_duckdb_columns`) and :mod:`~mixrank.io.backend_dask`.
"""

from .backends import aggregate_cells, load_frame
from .datasets import list_datasets, load_dataset, load_example, load_shared, shared_data_dir
from .helm import read_helm
from .inspect_logs import read_inspect
from .lighteval import read_lighteval
from .lm_eval import read_lm_eval
from .read import FORMATS, detect_format, read
from .wide import read_wide

__all__ = ["load_frame", "aggregate_cells", "load_example", "load_shared", "load_dataset", "list_datasets", "shared_data_dir", "read_lm_eval", "read_wide",
           "read", "read_inspect", "read_helm", "read_lighteval", "FORMATS", "detect_format"]
