"""`uqeval compare`: the plan, estimates, intervals and tests of several models (``core``), the skill
against a reference (``skill``) and the streamed fold (``stream``)."""
