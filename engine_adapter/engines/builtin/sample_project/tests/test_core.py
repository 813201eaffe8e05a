import unittest

from stats import mean, median


class MeanTest(unittest.TestCase):
    def test_mean(self) -> None:
        self.assertEqual(mean([1, 2, 3, 4]), 2.5)

    def test_empty(self) -> None:
        with self.assertRaises(ValueError):
            mean([])


class MedianTest(unittest.TestCase):
    def test_odd_count(self) -> None:
        self.assertEqual(median([5, 1, 3]), 3)

    def test_even_count(self) -> None:
        self.assertEqual(median([4, 1, 3, 2]), 2.5)

    def test_empty(self) -> None:
        with self.assertRaises(ValueError):
            median([])


if __name__ == "__main__":
    unittest.main()
