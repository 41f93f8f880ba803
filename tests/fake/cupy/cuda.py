# cupy.cuda of the fake CuPy (tests/fake/cupy): the current device, always 0 on the fake driver.


class runtime:
    @staticmethod
    def getDevice():
        return 0
