"""SQL from a question: a typed answer checked by an output validator that sends the model
back (ModelRetry) when the query is not a read-only SELECT on the known table.
"""

from __future__ import annotations

import sqlite3

from pydantic import BaseModel, Field

from helikon import Agent, ModelRetry, UserMessage
from helikon.testing import MockModel, Text

SCHEMA = "CREATE TABLE records (created_at TEXT, level TEXT, message TEXT)"


class SqlQuery(BaseModel):
    sql_query: str = Field(description="One SQLite SELECT statement")
    explanation: str = Field(description="What the query does, in one sentence")


model = MockModel(
    [
        [
            Text(
                '{"sql_query": "DELETE FROM records WHERE level = \'error\'", '
                '"explanation": "Removes the errors."}'
            )
        ],
        [
            Text(
                '{"sql_query": "SELECT message FROM records WHERE level = \'error\' '
                'AND created_at >= \'2026-12-04\'", "explanation": "Errors since yesterday."}'
            )
        ],
    ]
)
agent: Agent[None, SqlQuery] = Agent(
    name="sql_gen",
    model=model,
    instructions=f"Write one SQLite query answering the request. The database:\n{SCHEMA}",
    output_type=SqlQuery,
    retries=2,
)


@agent.output_validator
def only_selects(output: SqlQuery) -> SqlQuery:
    if not output.sql_query.upper().startswith("SELECT"):
        raise ModelRetry("Only SELECT queries are allowed; do not change the data.")
    db = sqlite3.connect(":memory:")
    db.execute(SCHEMA)
    try:
        db.execute(f"EXPLAIN {output.sql_query}")
    except sqlite3.Error as exc:
        raise ModelRetry(f"Invalid query: {exc}") from None
    return output


result = agent.run_sync("Show me the error messages since yesterday.")
print(result.final_output.sql_query)
print(result.final_output.explanation)
repair = model.requests[1].messages[-1]
assert isinstance(repair, UserMessage)
print(f"sent back once with: {repair.text()}")
model.assert_exhausted()
