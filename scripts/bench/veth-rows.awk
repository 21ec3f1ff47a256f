# The rows of scripts/bench/veth, from its samples: one line per run,
# "TRAFFIC CASE REPEAT NS MPPS STACK RATIO_TO_DROP DROP_BEFORE DROP_AFTER".
# Per case: its medians and its ratio to XDP_DROP; per goal: the limiter
# against XDP_DROP, the reference and each peer, repeat by repeat, as the
# median with the least and greatest value. A goal is met when the
# median meets it.
# usage: awk -v v4=N -v v6=N -f veth-rows.awk SAMPLES
function sort(a, n,    i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
}
function median(a, n) {
	sort(a, n)
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# spread of a[1..n]: sets MED, MIN, MAX
function spread(a, n,    i) {
	MED = median(a, n); MIN = a[1]; MAX = a[n]
}
function fmt(med, min, max, n) {
	if (n > 1)
		return sprintf("%.2f (%.2f\342\200\223%.2f)", med, min, max)
	return sprintf("%.2f", med)
}
function verdict(med, min, max, goal,    r) {
	r = med <= goal ? "met" : "**MISSED**"
	if (min <= goal && max > goal)
		r = r " (spread straddles the goal)"
	return r
}
# values of column COL for traffic T, case C into V[1..]; returns n
function values(t, c, col,    i, n) {
	n = 0
	for (i = 1; i <= rows; i++)
		if (T[i] == t && C[i] == c)
			V[++n] = F[i, col]
	return n
}
function value_of(t, c, col,    n) {
	n = values(t, c, col)
	return median(V, n)
}
function case_row(t, c, what,    n, ns, mpps, stack) {
	if (!values(t, c, 4))
		return
	ns = value_of(t, c, 4); mpps = value_of(t, c, 5); stack = value_of(t, c, 6)
	n = values(t, c, 7); spread(V, n)
	printf "| veth, NAPI CPU/packet vs XDP_DROP | %s, %s | %.1f ns/packet (%.2f Mpps, %d%% reached IP) | %s |  |  |\n", what, TN[t], ns, mpps, stack, fmt(MED, MIN, MAX, n)
}
# goal_row T PEER WHAT GOAL SOURCE: the limiter over PEER repeat by
# repeat (PEER "drop": its ratio to XDP_DROP)
function goal_row(t, p, what, goal, source,    i, j, n, r, ln, pn, target, result) {
	n = 0
	for (i = 1; i <= rows; i++) {
		if (T[i] != t || C[i] != "limiter")
			continue
		if (p == "drop") {
			r[++n] = F[i, 7]
			continue
		}
		for (j = 1; j <= rows; j++)
			if (T[j] == t && C[j] == p && F[j, 3] == F[i, 3])
				r[++n] = F[i, 7] / F[j, 7]
	}
	if (!n)
		return
	spread(r, n)
	ln = value_of(t, "limiter", 4)
	pn = p == "drop" ? value_of(t, "limiter", 8) : value_of(t, p, 4)
	target = source; result = ""
	if (goal > 0) {
		target = "<= " goal " (" source ")"
		result = verdict(MED, MIN, MAX, goal)
	}
	printf "| veth, limiter vs %s | %s | %.1f vs %.1f ns/packet | %s | %s | %s |\n", what, TN[t], ln, pn, fmt(MED, MIN, MAX, n), target, result
}
{
	rows++
	T[rows] = $1; C[rows] = $2
	for (k = 3; k <= NF; k++)
		F[rows, k] = $k
}
END {
	TN["one"] = "one flooding source"
	TN["v4"] = v4 " IPv4 sources"
	TN["v6"] = v6 " IPv6 sources (spoofed flood)"
	drop_goal["one"] = 1.5; drop_goal["v4"] = 2.5; drop_goal["v6"] = 4
	ref_goal["one"] = 1.1; ref_goal["v4"] = 1.3; ref_goal["v6"] = 1.3
	split("one v4 v6", order, " ")
	for (o = 1; o <= 3; o++) {
		t = order[o]
		goal_row(t, "drop", "bare XDP_DROP", drop_goal[t], "issue 2")
		goal_row(t, "ref", "reference program", ref_goal[t],
			 "issue 11 micro goal, applied here")
		goal_row(t, "nft-netdev", "nftables meter, netdev ingress", 0.5, "issue 2: half")
		goal_row(t, "nft-inet", "nftables meter, inet prerouting", 0.5, "issue 2: half")
		goal_row(t, "hashlimit", "hashlimit, raw PREROUTING", 0.5, "issue 2: half")
		goal_row(t, "xdp-filter", "xdp-filter (deny list, passes all)", 0,
			 "none: xdp-filter does not limit (for scale)")
		case_row(t, "limiter", "limiter")
		if (t != "one")
			case_row(t, "limiter-nobudget", "limiter, new-source budget off (every source inserted)")
		case_row(t, "ref", "reference program (ref.bpf.c)")
		case_row(t, "nft-netdev", "nftables meter in netdev ingress (behind XDP_PASS)")
		case_row(t, "nft-inet", "nftables meter in inet prerouting (behind XDP_PASS)")
		case_row(t, "hashlimit", (t == "v6" ? "ip6tables" : "iptables") " hashlimit in raw PREROUTING (behind XDP_PASS)")
		case_row(t, "xdp-filter", "xdp-filter, deny list, nothing matches")
		case_row(t, "pass", "no filter (XDP_PASS)")
	}
}