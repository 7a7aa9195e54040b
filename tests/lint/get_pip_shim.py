"""Stand-in for the pip bootstrap script that ansible-test downloads from a host this machine cannot reach.

ansible-test runs it with a new virtual environment's Python and pip-install arguments. It installs the
pip bundled with Python (ensurepip, in a child process so that its PIP_CONFIG_FILE=/dev/null does not
leak into the install that follows), then runs ``pip install`` with the arguments, honouring the
machine's pip configuration (index, CA bundle).
"""

import os
import subprocess
import sys

env = {k: v for k, v in os.environ.items() if k != "PIP_CONFIG_FILE"}
subprocess.check_call([sys.executable, "-m", "ensurepip", "--upgrade"], env=env, stdout=subprocess.DEVNULL)
# --no-setuptools and --no-wheel are options of the bootstrap script itself, not of pip install
ARGS = [arg for arg in sys.argv[1:] if arg not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install"] + ARGS, env=env))
