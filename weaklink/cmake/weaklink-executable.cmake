# Written by `weaklink --cmake-dir`: the weaklink that printed this directory.
set(_weaklink_recorded_command "/work/main/.venv/bin/python" "-m" "weaklink.cli")
