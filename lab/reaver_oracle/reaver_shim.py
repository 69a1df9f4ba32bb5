"""Make Reaver 2.1.9 importable on TensorFlow 2.21 (see shared/DESIGN.md): legacy Keras, pysc2 through reaver_nb's
compat layer (reaver_nb must be installed in the same venv), and a stand-in for the removed tf.estimator.

Copied from shared/tools/reaver_oracle/reaver_shim.py (the project's oracle probe, issue 28 part 1); only this
sentence added."""
import os, types
os.environ.setdefault('TF_USE_LEGACY_KERAS', '1'); os.environ.setdefault('TF_CPP_MIN_LOG_LEVEL', '2')
from reaver_nb.sc2.compat import import_pysc2
import_pysc2()
import tensorflow as tf
if not hasattr(tf, 'estimator'):
    tf.estimator = types.SimpleNamespace(SessionRunHook=object)
