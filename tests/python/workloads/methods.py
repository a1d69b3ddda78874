# SPDX-License-Identifier: GPL-2.0
"""Methods, a closure and a static method, by qualified name:
<module> main Shop.run Shop.run.<locals>.tally Basket.total Basket.price leaf."""
import time

from common import deadline, leaf


class Basket:
    def total(self):
        return self.price() + 1

    @staticmethod
    def price():
        return leaf()


class Shop:
    def run(self, end):
        b = Basket()

        def tally():
            return b.total()

        while time.monotonic() < end:
            tally()


def main():
    Shop().run(deadline())


main()
