"""Stage io: readers to the canonical long schema and dataset loaders."""

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
