"""The mean and the median of a list of numbers."""


def mean(values: list[float]) -> float:
    """The arithmetic mean of `values`.

    >>> mean([1, 2, 3, 4])
    2.5
    """
    if not values:
        raise ValueError("mean() of an empty list")
    return sum(values) / len(values)


def median(values: list[float]) -> float:
    """The middle value of `values`; for an even count, the mean of the two middle values.

    >>> median([3, 1, 2])
    2
    >>> median([4, 1, 3, 2])
    2.5
    """
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median() of an empty list")
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid] + ordered[mid + 1]) / 2
