"""`python -m tools.plan`: runs tools.plan.run, under the name CI uses on both sides of a diff.

The pull-request workflow plans the base commit with the head's command; this name works whether
the base predates the move into packages (issue 27) or not.
"""

from __future__ import annotations

from tools.plan.run import main

raise SystemExit(main())
