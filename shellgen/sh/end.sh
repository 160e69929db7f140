# end.sh: the end of every script: the end marker.
bg_end
