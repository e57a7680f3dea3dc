"""Label conventions shared by the data code (which writes labels) and the models (which score them).

IGNORE_INDEX: the label of a position no loss scores (an MLM position that was not selected, padding);
PyTorch's `cross_entropy` skips it by default.
"""

IGNORE_INDEX = -100
