"""Renders release the GIL: Python threads render at once, and Dask assembles a map from chunks."""

import concurrent.futures
import time

import numpy as np

import geogen

# Enough work per render that thread start-up and Python's share are small beside it.
SIDE = 1536
RENDERS = 4


def _timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def test_renders_on_two_threads_equal_serial_renders_and_take_less_time(island, capsys):
    # threads=1 gives each render a thread of its own: the two workers then run on two cores only if
    # the GIL is released while they render. (With the shared pool, one render already uses every
    # core, and two would queue on it.)
    def render(seed):
        return island.render(0, 0, SIDE, SIDE, seed=seed, threads=1)

    def serial():
        return [render(seed) for seed in range(RENDERS)]

    def on_two_threads():
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            return list(pool.map(render, range(RENDERS)))

    render(0)  # warm up: page faults, the library's first use
    serial_times, concurrent_times = [], []
    for _ in range(3):
        seconds, serial_maps = _timed(serial)
        serial_times.append(seconds)
        seconds, concurrent_maps = _timed(on_two_threads)
        concurrent_times.append(seconds)
        for one, other in zip(serial_maps, concurrent_maps):
            assert np.array_equal(one, other)
    best_serial, best_concurrent = min(serial_times), min(concurrent_times)
    ratio = best_concurrent / best_serial
    with capsys.disabled():  # shown in every run, not only when the test fails
        print(
            f"\n{RENDERS} renders of {SIDE}x{SIDE}: serial {best_serial:.3f} s, "
            f"2 threads {best_concurrent:.3f} s ({ratio:.2f}x serial; best of 3)"
        )
    assert ratio < 0.9, f"two threads took {ratio:.2f}x the serial time: is the GIL held while rendering?"


def test_the_main_thread_runs_while_another_renders(island):
    # A second sign that the GIL is released: Python code keeps running during a render.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        future = pool.submit(island.render, 0, 0, 2048, 2048, seed=1, threads=1)
        ticks = 0
        while not future.done():
            ticks += 1
            time.sleep(0.001)
        assert future.result().shape == (2048, 2048)
    assert ticks >= 10, f"the main thread ran only {ticks} times during a render"


def test_a_dask_array_of_2x2_chunks_equals_one_render(island):
    import dask
    import dask.array as da

    width = height = 1024
    chunk = 512

    def render_block(block_info=None):
        (y0, y1), (x0, x1) = block_info[None]["array-location"]
        return island.render(x0, y0, x1 - x0, y1 - y0, seed=7, map_size=(width, height))

    terrain = da.map_blocks(render_block, chunks=((chunk, chunk), (chunk, chunk)), dtype=np.float32)
    assert terrain.numblocks == (2, 2)
    with dask.config.set(scheduler="threads"):
        heights = terrain.compute()
    assert heights.dtype == np.float32 and heights.shape == (height, width)
    assert np.array_equal(heights, island.render(0, 0, width, height, seed=7))
