"""The module entry point: runs tools.plan.run under the name CI uses on both sides of a diff
(docs/cli.md says why this one module is run directly).

The pull-request workflow plans the base commit with the head's command; this name works whether
the base predates the move into packages (issue 27) or not.
"""

from __future__ import annotations

from tools.plan.run import main

raise SystemExit(main())
