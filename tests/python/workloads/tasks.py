# SPDX-License-Identifier: GPL-2.0
"""An asyncio task running coroutines: the event loop resumes the task
from C, whose coroutine frames run above it:
... Handle._run [C] job work_step leaf."""
import asyncio
import time

from common import deadline, leaf


async def work_step():
    leaf(500)
    await asyncio.sleep(0)


async def job(end):
    while time.monotonic() < end:
        await work_step()


async def amain():
    await asyncio.create_task(job(deadline()))


asyncio.run(amain())
