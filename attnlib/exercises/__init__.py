"""Self-checked exercises: write an answer, call ``.check(answer)``, read why.

Every notebook imports the exercises of its chapter and calls them in the style of Kaggle
Learn's exercise notebooks::

    from attnlib.exercises import ch02

    ch02.score_variance.check(72)   # Correct! / Not yet. ... / Not answered yet.
    ch02.score_variance.hint()
    ch02.score_variance.solution()
    attnlib.exercises.progress()    # what you answered, hinted or revealed in this session

=========  ===========================================  ===================================
module     notebook                                     exercises
=========  ===========================================  ===================================
ch01       01_qkv_projections                           projection_shapes
ch02       02_why_sqrt_dk                               product_variance, score_variance
ch03       03_worked_example_it                         late_weights
ch04       04_softmax_saturation                        softmax_jacobian
ch05       05_overflow_misconception                    stable_softmax
ch06       06_masking                                   masked_attention, kv_cache_mask
ch07       07_multi_head                                split_heads
ch08       08_gqa_and_kv_cache                          kv_cache_bytes
ch09       09_positions                                 rope_pair, rope_score, alibi_slopes_8,
                                                        alibi_slopes_12, pairing
ch10       10_cost_and_tiling                           online_softmax_step
ch11       11_gradients                                 softmax_backward
recall     12_active_recall                             one per idea of 01-11
ch14       14_induction_heads                           induction_target, induction_score,
                                                        composition
=========  ===========================================  ===================================

The kinds of exercise (:mod:`attnlib.exercises.checking`): a number (``NumberExercise``, with a
tolerance, and its mistakes as compounding factors where they compound), the steps of a
derivation (``StepsExercise``), an array (``ArrayExercise``; lists, tuples, tensors), shapes
(``ShapeExercise``; tuples or lists), a set of named items (``SetExercise``), a choice among
options whose reasons are part of the option (``ChoiceExercise``), and a function the student
writes (``FunctionExercise``, run with a time limit on cases chosen to break each typical
mistake and compared with attnlib's reference; a wrong function is told how many cases it
passes). ``check`` prints plain text; ``evaluate`` returns the verdict (a
:class:`~attnlib.exercises.checking.Feedback`) without printing, for tests.

State: every exercise object keeps a record of its own (checks, right or not, hint and
solution shown) for this session; :func:`progress` prints those records for the chapters the
student used. That is the only state, and nothing else reads it.

How to add an exercise to a notebook (recipe)
---------------------------------------------
1. The exercise object lives in ``attnlib/exercises/chNN.py`` (notebook NN) and is listed in
   that module's ``__all__``; ``tests/exercises/test_exercises.py`` tests its right answer and
   each typical wrong answer (the placeholder, ``None`` and short lines are tested for every
   exercise).
2. In the notebook's percent script, right after the section that teaches the idea (before the
   section that works the answer, where there is one), four cells:

   a. A markdown cell ``### Exercise: <what to do>`` with the question, the sizes, and how to
      ask for help (``ch02.score_variance.hint()``, ``.solution()``).
   b. The exercise cell: the import, the given numbers, the placeholder and the check::

          # %%
          from attnlib.exercises import ch02

          d_k, sigma_q, sigma_k = 32, 0.5, 3.0
          var_score = ...  # your answer: Var(q . k)
          ch02.score_variance.check(var_score)

      For a function, the placeholder is a body that raises::

          def my_softmax(x):
              raise NotImplementedError  # replace this line with your code


          ch05.stable_softmax.check(my_softmax)

      The committed notebook keeps the placeholder; its stored output is the stable line
      ``Not answered yet. Replace the ... with your answer, then run the cell again.``
   c. A markdown cell ``**Solution** (hidden; click the collapsed cell below to show it):``.
   d. The solution cell, collapsed (source and output), which runs ``check_solution`` on the
      right answer, so that CI proves the check accepts its own solution::

          # %% jupyter={"outputs_hidden": true, "source_hidden": true}
          # solution (click to expand)
          ch02.score_variance.check_solution(d_k * sigma_q**2 * sigma_k**2)

      JupyterLab shows the first line of a collapsed cell, so that line is the comment
      ``# solution (click to expand)``; the cell prints nothing but the verdict, whose first
      line is ``Correct!`` alone (no intermediate numbers). ``check_solution`` is not counted
      as the student's answer by :func:`progress`. It computes the answer (never types a
      number in) and never reassigns the student's
      names (``var_score``, ``my_softmax``): "Run All" runs it after the student's cell, and it
      must not overwrite their work. Name a solution function ``<name>_solution``. Rely on as
      few of the notebook's variables as possible (``np.sqrt(Q.shape[-1])`` rather than a
      ``d_k`` that a later cell may reassign).
3. Run ``python tools/run_notebooks.py notebooks/NN_name.ipynb``. The exercise cell prints
   ``Not answered yet.``, the solution cell ``Correct!``. The tests in
   ``tests/exercises/test_exercises.py`` check that pairing, the first line and the output of every
   solution cell in every notebook that imports ``attnlib.exercises``.
"""

from . import ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11, ch14, recall
from .checking import progress_report, say

__all__ = [
    "ch01",
    "ch02",
    "ch03",
    "ch04",
    "ch05",
    "ch06",
    "ch07",
    "ch08",
    "ch09",
    "ch10",
    "ch11",
    "ch14",
    "progress",
    "recall",
]

_CHAPTERS = (ch01, ch02, ch03, ch04, ch05, ch06, ch07, ch08, ch09, ch10, ch11, recall, ch14)


def progress() -> None:
    """Print which exercises of the chapters you used you have answered, hinted or revealed.

    Lists, for every chapter module with an exercise checked, hinted or revealed in this
    session (this kernel), each of its exercises: answered correctly, tried, or not answered,
    with the number of checks and whether the hint or the solution was shown. The hidden
    solution cells (``check_solution``) do not count as your answers.
    """
    say(progress_report(_CHAPTERS))
