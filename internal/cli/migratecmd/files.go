package migratecmd

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Upgrade is one apiVersion line to move: Line counts from 0.
type Upgrade struct {
	Line     int
	Kind     string
	Group    string
	From, To string
}

// yamlKey is a `key: value` line of a block mapping: the column where the
// key starts (after any "- " list markers), the key, the value without a
// trailing comment or quotes, and whether the line starts a list item.
type yamlKey struct {
	col      int
	key      string
	value    string
	listItem bool
}

func parseKey(line string) (yamlKey, bool) {
	line = strings.TrimSuffix(line, "\r")
	rest := strings.TrimLeft(line, " ")
	k := yamlKey{col: len(line) - len(rest)}
	for strings.HasPrefix(rest, "- ") {
		k.listItem = true
		trimmed := strings.TrimLeft(rest[2:], " ")
		k.col += len(rest) - len(trimmed)
		rest = trimmed
	}
	name, value, ok := strings.Cut(rest, ":")
	if !ok || name == "" || strings.ContainsAny(name, " #\"'") || (value != "" && value[0] != ' ' && value[0] != '\t') {
		return yamlKey{}, false
	}
	if i := strings.Index(value, " #"); i >= 0 {
		value = value[:i]
	}
	value = strings.TrimSpace(value)
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		value = value[1 : len(value)-1]
	}
	k.key, k.value = name, value
	return k, true
}

// blank says whether a line carries no mapping content.
func blank(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || strings.HasPrefix(t, "#")
}

// docBoundary is a YAML document separator or end marker.
func docBoundary(line string) bool {
	t := strings.TrimRight(line, " \r")
	return t == "---" || strings.HasPrefix(t, "--- ") || t == "..."
}

// siblingKind finds the kind: key of the mapping that holds the apiVersion
// key on line i (same column, same list item, same document), after or
// before it, so that either order of the two keys is understood.
func siblingKind(lines []string, i int, col int) (string, bool) {
	if kind, ok := scanKind(lines, i, col, 1); ok {
		return kind, true
	}
	return scanKind(lines, i, col, -1)
}

// scanKind walks from line i in direction step (1 or -1) through the lines
// of the mapping at column col, looking for its kind: key. A list item
// marker at col ends the mapping: going forward it starts the next item;
// going backward it is the first line of this one, checked last.
func scanKind(lines []string, i, col, step int) (string, bool) {
	for j := i + step; j >= 0 && j < len(lines) && !docBoundary(lines[j]); j += step {
		if blank(lines[j]) {
			continue
		}
		k, ok := parseKey(lines[j])
		if !ok || k.col != col {
			if len(lines[j])-len(strings.TrimLeft(lines[j], " ")) < col {
				return "", false
			}
			continue
		}
		if k.listItem && step > 0 {
			return "", false
		}
		if k.key == "kind" {
			return k.value, true
		}
		if k.listItem {
			return "", false
		}
	}
	return "", false
}

// Detect lists the apiVersion lines of data whose group and kind have a
// latest version other than the one written.
func Detect(data []byte, latest map[schema.GroupKind]string) []Upgrade {
	lines := strings.Split(string(data), "\n")
	var out []Upgrade
	for i, line := range lines {
		k, ok := parseKey(line)
		if !ok || k.key != "apiVersion" {
			continue
		}
		gv, err := schema.ParseGroupVersion(k.value)
		if err != nil || gv.Group == "" {
			continue
		}
		kind, ok := siblingKind(lines, i, k.col)
		if !ok {
			continue
		}
		to, known := latest[schema.GroupKind{Group: gv.Group, Kind: kind}]
		if !known || to == gv.Version {
			continue
		}
		out = append(out, Upgrade{Line: i, Kind: kind, Group: gv.Group, From: gv.Version, To: to})
	}
	return out
}

// Apply rewrites the apiVersion value on each upgrade's line and leaves
// every other byte of data as it was.
func Apply(data []byte, upgrades []Upgrade) []byte {
	lines := strings.Split(string(data), "\n")
	for _, u := range upgrades {
		line := lines[u.Line]
		at := strings.Index(line, "apiVersion:")
		if at < 0 {
			continue
		}
		head, tail := line[:at], line[at:]
		lines[u.Line] = head + strings.Replace(tail, u.Group+"/"+u.From, u.Group+"/"+u.To, 1)
	}
	return []byte(strings.Join(lines, "\n"))
}
