# records.sh: writing records (see records.go): escaping a field, an E
# record that ends the script, and the end marker.

# bg_err KIND MESSAGE: report an error record and end the script.
bg_err() {
	bg_esc "$2"
	printf 'E\t%s\t%s\n' "$1" "$bg_e"
	bg_end
	exit 0
}

# bg_esc STRING: set bg_e to STRING with backslash, newline and tab written
# as \\, \n and \t, so that a path or message from the filesystem or a user
# stays one field of one record.
bg_esc() {
	bg_e=$1
	case $bg_e in *[\\"$bg_nl$bg_tab"]*) ;; *) return 0 ;; esac
	bg_eo=
	while [ -n "$bg_e" ]; do
		bg_ec=${bg_e%"${bg_e#?}"}
		bg_e=${bg_e#?}
		case $bg_ec in
		\\) bg_eo="$bg_eo\\\\" ;;
		"$bg_nl") bg_eo="$bg_eo\\n" ;;
		"$bg_tab") bg_eo="$bg_eo\\t" ;;
		*) bg_eo=$bg_eo$bg_ec ;;
		esac
	done
	bg_e=$bg_eo
}

# bg_end: write the end marker.
bg_end() {
	printf '\n@@bgjob-end@@\n'
}
