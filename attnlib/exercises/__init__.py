"""Self-checked exercises: write an answer, call ``.check(answer)``, read why.

Every notebook imports the exercises of its chapter and calls them in the style of Kaggle
Learn's exercise notebooks::

    from attnlib.exercises import ch02

    ch02.score_variance.check(72)   # Correct! / Not yet. ... / Not answered yet.
    ch02.score_variance.hint()
    ch02.score_variance.solution()

=========  ===========================================  ===================================
module     notebook                                     exercises
=========  ===========================================  ===================================
ch01       01_qkv_projections                           projection_shapes
ch02       02_why_sqrt_dk                               product_variance, score_variance
ch03       03_worked_example_it                         late_weights
ch04       04_softmax_saturation                        softmax_jacobian
ch05       05_overflow_misconception                    stable_softmax
ch06       06_masking                                   masked_attention, kv_cache_mask
ch07       07_multi_head_and_kv_cache                   split_heads, kv_cache_bytes
ch08       08_cost_and_tiling                           online_softmax_step
ch09       09_gradients                                 softmax_backward
recall     10_active_recall                             one per idea of 01-09
=========  ===========================================  ===================================

The kinds of exercise (:mod:`attnlib.exercises.checking`): a number (``NumberExercise``, with a
tolerance), an array (``ArrayExercise``; lists are fine), shapes (``ShapeExercise``; tuples or
lists), a choice among options whose reasons are part of the option (``ChoiceExercise``), and a
function the student writes (``FunctionExercise``, run on seeded inputs and edge cases and
compared with attnlib's reference). ``check`` prints plain text; ``evaluate`` returns the
verdict (a :class:`~attnlib.exercises.checking.Feedback`) without printing, for tests.

How to add an exercise to a notebook (recipe)
---------------------------------------------
1. The exercise object lives in ``attnlib/exercises/chNN.py`` (notebook NN), with a test in
   ``tests/test_exercises.py`` for its right answer and for each typical wrong answer.
2. In the notebook, right after the section that teaches the idea, three cells:

   a. A markdown cell ``### Exercise: <what to do>``, stating the question and the sizes, and
      how to ask for help (``.hint()``, ``.solution()``).
   b. The exercise cell: the import, the given numbers, the placeholder and the check::

          # %%
          from attnlib.exercises import ch02

          d_k, sigma_q, sigma_k = 32, 0.5, 3.0
          var_qk = ...  # your answer: Var(q . k)
          ch02.score_variance.check(var_qk)

      For a function, the placeholder is a body that raises::

          def stable_softmax(x):
              raise NotImplementedError  # replace this line with your code

      The committed notebook keeps the placeholder: its stored output is the stable line
      ``Not answered yet. Replace the ... with your answer, then run the cell again.``
   c. A markdown cell ``Solution (click the hidden cell below to show it):`` and then the
      solution cell, collapsed, which runs the check on the right answer, so that CI proves
      the check accepts its own solution. In the percent script its header is::

          # %% jupyter={"source_hidden": true, "outputs_hidden": true}
          ch02.score_variance.check(d_k * sigma_q**2 * sigma_k**2)

      The solution cell computes the answer (never types it in) and does not reassign the
      student's names (``var_qk``, ``stable_softmax``): with "Run All" it runs after the
      student's cell and must not overwrite their work. Name a solution function
      differently (``stable_softmax_solution``).
3. Run ``python tools/run_notebooks.py notebooks/NN_name.ipynb``; the exercise cell must print
   ``Not answered yet.`` and the solution cell ``Correct!``.
"""

from . import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, recall

__all__ = ["ch01", "ch02", "ch03", "ch04", "ch05", "ch06", "ch07", "ch08", "ch09", "recall"]
