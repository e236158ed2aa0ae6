package generate

import (
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	sourceextensionsv1beta1 "github.com/weir-gitops/weir/api/sourceextensions/v1beta1"
)

// Sources maps each source alias to the directory holding its files.
type Sources map[string]string

// Artifact is one ExternalArtifact to build: the spec's entry with the
// pathPattern captures substituted.
type Artifact struct {
	// Name of the ExternalArtifact.
	Name string
	// Labels are the pathPattern captures, lower-cased, which source-watcher
	// sets as labels of the generated object; nil without pathPattern.
	Labels map[string]string
	// Dir is the source directory the pathPattern matched; empty without.
	Dir string
	// Spec is the output artifact with its copy paths rendered.
	Spec sourceextensionsv1beta1.OutputArtifact
}

var (
	captureName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	captureRef  = regexp.MustCompile(`\\\{([A-Za-z0-9_]+)\\\}`)
)

// Validate checks what the spec's schema cannot: unique aliases and
// artifact names, and that every "@alias" it uses names a source.
func Validate(spec *sourceextensionsv1beta1.ArtifactGeneratorSpec) error {
	aliases := map[string]bool{}
	for _, s := range spec.Sources {
		if aliases[s.Alias] {
			return specErrorf("duplicate source alias '%s' found", s.Alias)
		}
		aliases[s.Alias] = true
	}
	names := map[string]bool{}
	for _, a := range spec.OutputArtifacts {
		if names[a.Name] {
			return specErrorf("duplicate artifact name '%s' found", a.Name)
		}
		names[a.Name] = true
		for field, ref := range map[string]string{"revision": a.Revision, "originRevision": a.OriginRevision} {
			if alias := strings.TrimPrefix(ref, "@"); ref != "" && !aliases[alias] {
				return specErrorf("artifact %s %s source alias '%s' not found", a.Name, field, alias)
			}
		}
		for _, op := range a.Copy {
			alias, _, err := parseFrom(op.From)
			if err != nil {
				return err
			}
			if !strings.Contains(alias, "{") && !aliases[alias] {
				return specErrorf("artifact %s: copy from '%s': source alias '%s' not found", a.Name, op.From, alias)
			}
		}
	}
	return nil
}

// Expand returns the artifacts the spec asks for: its artifacts as they
// are without pathPattern, or, with one, each artifact rendered once for
// every directory of the source matching the pattern, in lexical order of
// the directories. A capture {name} matches one path segment; artifact
// names and labels take the lower-cased value, copy paths the value as it
// is (source-watcher's rules).
func Expand(spec *sourceextensionsv1beta1.ArtifactGeneratorSpec, sources Sources) ([]Artifact, error) {
	if spec.PathPattern == "" {
		out := make([]Artifact, 0, len(spec.OutputArtifacts))
		for _, oa := range spec.OutputArtifacts {
			out = append(out, Artifact{Name: oa.Name, Spec: oa})
		}
		return out, nil
	}
	pp := spec.PathPattern
	alias, pattern, ok := strings.Cut(strings.TrimPrefix(pp, "@"), "/")
	if !strings.HasPrefix(pp, "@") || !ok {
		return nil, specErrorf("invalid pathPattern format: %s", pp)
	}
	dir, ok := sources[alias]
	if !ok {
		return nil, specErrorf("pathPattern %q: source alias %s not found in local sources", pp, alias)
	}
	re, err := compilePathPattern(pp, pattern)
	if err != nil {
		return nil, err
	}
	dirs, err := matchingDirs(dir, re)
	if err != nil {
		return nil, err
	}
	var out []Artifact
	seen := map[string]string{}
	for _, m := range dirs {
		raw, lower := map[string]string{}, map[string]string{}
		sub := re.FindStringSubmatch(m)
		for i, name := range re.SubexpNames() {
			if i == 0 || name == "" {
				continue
			}
			raw[name], lower[name] = sub[i], strings.ToLower(sub[i])
			if errs := content.IsLabelValue(lower[name]); len(errs) > 0 {
				return nil, specErrorf("pathPattern %q: captured value %q for variable %q is not a valid Kubernetes label value: %s",
					pp, lower[name], name, strings.Join(errs, "; "))
			}
		}
		for _, oa := range spec.OutputArtifacts {
			a, err := render(oa, lower, raw)
			if err != nil {
				return nil, specErrorf("pathPattern %q: failed to render artifact %s for match %s: %v", pp, oa.Name, m, err)
			}
			if errs := apivalidation.NameIsDNSSubdomain(a.Name, false); len(errs) > 0 {
				return nil, specErrorf("pathPattern %q: rendered artifact name %q is not a valid Kubernetes object name: %s",
					pp, a.Name, strings.Join(errs, "; "))
			}
			if prev, dup := seen[a.Name]; dup {
				return nil, specErrorf("pathPattern %q: directories %q and %q both resolve to artifact name %q", pp, prev, m, a.Name)
			}
			seen[a.Name] = m
			a.Dir = m
			out = append(out, a)
		}
	}
	return out, nil
}

// compilePathPattern turns "apps/{app}" into ^apps/(?P<app>[^/]+)$.
func compilePathPattern(pp, pattern string) (*regexp.Regexp, error) {
	seen := map[string]bool{}
	for rest := pattern; ; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			break
		}
		if rest[i] == '}' {
			return nil, specErrorf("pathPattern %q: invalid capture: missing opening brace", pp)
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			return nil, specErrorf("pathPattern %q: invalid capture: missing closing brace", pp)
		}
		name := rest[i+1 : i+end]
		switch {
		case name == "":
			return nil, specErrorf("pathPattern %q: empty capture variable", pp)
		case !captureName.MatchString(name):
			return nil, specErrorf("pathPattern %q: capture variable %q must be a valid capture name matching [A-Za-z_][A-Za-z0-9_]*", pp, name)
		case seen[name]:
			return nil, specErrorf("pathPattern %q: duplicate capture variable %q", pp, name)
		}
		if errs := content.IsLabelKey(name); len(errs) > 0 {
			return nil, specErrorf("pathPattern %q: capture variable %q is not a valid Kubernetes label key: %s", pp, name, strings.Join(errs, "; "))
		}
		seen[name] = true
		rest = rest[i+end+1:]
	}
	expr := "^" + captureRef.ReplaceAllString(regexp.QuoteMeta(strings.TrimSuffix(pattern, "/")), `(?P<$1>[^/]+)`) + "$"
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, specErrorf("pathPattern %q: failed to compile path pattern: %v", pp, err)
	}
	return re, nil
}

// matchingDirs lists the directories under dir whose slash-separated
// relative path re matches, in lexical order. Links are not followed.
func matchingDirs(dir string, re *regexp.Regexp) ([]string, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening source: %w", err)
	}
	defer root.Close()
	var out []string
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && re.MatchString(p) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("failed to walk source directory: %w", err)
	}
	return out, nil
}

// render substitutes the captures into one artifact.
func render(oa sourceextensionsv1beta1.OutputArtifact, lower, raw map[string]string) (Artifact, error) {
	name, err := substitute(oa.Name, lower)
	if err != nil {
		return Artifact{}, err
	}
	spec := *oa.DeepCopy()
	spec.Name = name
	for i := range spec.Copy {
		if spec.Copy[i].From, err = substitute(spec.Copy[i].From, raw); err != nil {
			return Artifact{}, err
		}
		if spec.Copy[i].To, err = substitute(spec.Copy[i].To, raw); err != nil {
			return Artifact{}, err
		}
	}
	labels := make(map[string]string, len(lower))
	for k, v := range lower {
		labels[k] = v
	}
	return Artifact{Name: name, Labels: labels, Spec: spec}, nil
}

// substitute replaces each {name} of tmpl by its value.
func substitute(tmpl string, values map[string]string) (string, error) {
	var b strings.Builder
	for rest := tmpl; ; {
		i := strings.IndexAny(rest, "{}")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		if rest[i] == '}' {
			return "", fmt.Errorf("invalid template %q: capture is missing its opening brace", tmpl)
		}
		end := strings.IndexByte(rest[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("invalid template %q: capture is missing its closing brace", tmpl)
		}
		name := rest[i+1 : i+end]
		v, ok := values[name]
		if !ok {
			return "", fmt.Errorf("invalid template %q: capture variable %q is not defined by pathPattern", tmpl, name)
		}
		b.WriteString(rest[:i])
		b.WriteString(v)
		rest = rest[i+end+1:]
	}
}
