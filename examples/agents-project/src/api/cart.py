"""The cart's HTTP handlers."""


def total_cents(items: list[tuple[int, int]]) -> int:
    """The total of (price in cents, quantity) pairs."""
    return sum(price * quantity for price, quantity in items)
