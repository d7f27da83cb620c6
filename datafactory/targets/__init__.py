"""Output targets: training records shaped for the trainer that reads them.

Pure functions from the branches of one rollout (dict form, as the load stage yields them) to
the records of a target; the export run decides where they are written.
"""

from __future__ import annotations

from datafactory.targets.trl import (
    CALL_ID_LENGTH,
    RolloutRecords,
    TrlOptions,
    TrlRecord,
    Turns,
    arguments_as_objects,
    branch_turns,
    dpo_record,
    kto_records,
    passed,
    prompt_records,
    rollout_records,
    sft_input_record,
    sft_records,
    tool_catalogue,
)

__all__ = [
    "CALL_ID_LENGTH",
    "RolloutRecords",
    "TrlOptions",
    "TrlRecord",
    "Turns",
    "arguments_as_objects",
    "branch_turns",
    "dpo_record",
    "kto_records",
    "passed",
    "prompt_records",
    "rollout_records",
    "sft_input_record",
    "sft_records",
    "tool_catalogue",
]
