#!/usr/bin/env python
"""``python -m train.export``: a policy as a weights-only ``.pt`` (or ONNX) file.

The code is ``train.common.export``; this file keeps the documented command.
"""

import sys

from train.common.export import main

if __name__ == "__main__":
    sys.exit(main())
