# bench/rec_lib.sh rec_own_samples (bench/record.sh, bench/recpaced.sh):
# perf script -F comm,pid,ip,sym in, -F comm,ip,sym out, the view of one's
# own recorders. Variables: me (their PIDs, space-separated; empty: none
# of ours runs), ranges (where their BPF programs' JIT'ed code is,
# bench/recjit.py: "start end" pairs of 16-digit hex, space-separated).
# Other nprec and tcpdump processes are renamed "other-NAME"; a sample
# whose chain has a BPF program frame outside those ranges is renamed
# "foreign-bpf" (outside bench/recshare.py's --workload), so neither
# counts as ours. (By address, not by tag: two recorders of one build load
# programs of the same tags.)
BEGIN {
	n = split(ranges, t, " ")
	for (i = 1; i + 1 <= n; i += 2) { nr++; lo[nr] = t[i] ""; hi[nr] = t[i + 1] "" }
	n = split(me, t, " "); for (i = 1; i <= n; i++) ours[t[i]] = 1
}
# ours_at(IP): in one of the ranges (compared as strings of one width:
# awk's doubles cannot hold 64-bit addresses)
function ours_at(ip,   i) {
	ip = sprintf("%16s", ip); gsub(/ /, "0", ip)
	for (i = 1; i <= nr; i++)
		if (ip >= lo[i] && ip < hi[i])
			return 1
	return 0
}
function flush(   i) {
	if (head == "")
		return
	if (foreign)
		head = "foreign-bpf"
	print head
	for (i = 1; i <= nl; i++)
		print line[i]
	print ""
	head = ""; nl = 0; foreign = 0
}
/^[^ \t]/ {
	flush()
	p = $NF; $NF = ""; sub(/ +$/, "")
	head = ($0 ~ /^(nprec|tcpdump)/ && !(p in ours)) ? "other-" $0 : $0
	next
}
/^[ \t]*$/ { flush(); next }
{
	line[++nl] = $0
	if ($2 ~ /^bpf_prog_[0-9a-f]+_/ && !ours_at(tolower($1)))
		foreign = 1
}
END { flush() }
