"""The quickstart's two tools: a canned ledger of spending and budgets."""

from helikon import ToolEffect, tool

_SPENDING = {"dining": (312.40, 18), "groceries": (540.10, 9)}
_BUDGETS = {"dining": 250.0, "groceries": 600.0}


@tool(effect=ToolEffect.READ_ONLY)
def lookup_spending(category: str, month: str) -> dict[str, float | int]:
    """Look up the user's total spending and transaction count for a category in a month.

    Args:
        category: Spending category, e.g. "Dining".
        month: Month in YYYY-MM form.
    """
    total, count = _SPENDING.get(category.lower(), (0.0, 0))
    return {"total": total, "count": count}


@tool(effect=ToolEffect.READ_ONLY)
def budget_status(category: str) -> dict[str, float]:
    """Look up the user's monthly budget, amount spent, and remaining balance for a category.

    Args:
        category: Spending category, e.g. "Dining".
    """
    budget = _BUDGETS.get(category.lower(), 0.0)
    spent = _SPENDING.get(category.lower(), (0.0, 0))[0]
    return {"budget": budget, "spent": spent, "remaining": round(budget - spent, 2)}
