package crd

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

//go:embed bases/*.yaml
var bases embed.FS

// Labels put on every CRD, as Flux's installer puts them.
const (
	partOfLabel    = "app.kubernetes.io/part-of"
	componentLabel = "app.kubernetes.io/component"
	versionLabel   = "app.kubernetes.io/version"
	instanceLabel  = "app.kubernetes.io/instance"
)

// componentOfGroup names the Flux component that owns each API group. Flux's
// CLI reads app.kubernetes.io/component to tell which controller a CRD
// belongs to.
var componentOfGroup = map[string]string{
	"source.toolkit.fluxcd.io":       "source-controller",
	"kustomize.toolkit.fluxcd.io":    "kustomize-controller",
	"helm.toolkit.fluxcd.io":         "helm-controller",
	"notification.toolkit.fluxcd.io": "notification-controller",
	"image.toolkit.fluxcd.io":        "image-reflector-controller",
	"source.extensions.fluxcd.io":    "source-watcher",
}

// imageAutomationKinds belong to the image-automation controller although
// they share the image group with the reflector's kinds.
var imageAutomationKinds = map[string]bool{"ImageUpdateAutomation": true}

// Options says how to label the CRDs.
type Options struct {
	// Version is weir's version, written to app.kubernetes.io/version.
	Version string
	// Instance is the install namespace, written to app.kubernetes.io/instance.
	Instance string
}

// Load returns every CRD, sorted by name, labelled according to opts.
func Load(opts Options) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, fmt.Errorf("listing embedded CRDs: %w", err)
	}
	var crds []*apiextensionsv1.CustomResourceDefinition
	for _, file := range files {
		data, err := bases.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", file, err)
		}
		parsed, err := Decode(data)
		if err != nil {
			return nil, fmt.Errorf("decoding %s: %w", path.Base(file), err)
		}
		crds = append(crds, parsed...)
	}
	sort.Slice(crds, func(i, j int) bool { return crds[i].Name < crds[j].Name })
	for _, c := range crds {
		label(c, opts)
	}
	return crds, nil
}

// Component returns the Flux component name that serves crd.
func Component(crd *apiextensionsv1.CustomResourceDefinition) string {
	if imageAutomationKinds[crd.Spec.Names.Kind] {
		return "image-automation-controller"
	}
	return componentOfGroup[crd.Spec.Group]
}

func label(crd *apiextensionsv1.CustomResourceDefinition, opts Options) {
	if crd.Labels == nil {
		crd.Labels = map[string]string{}
	}
	crd.Labels[partOfLabel] = "flux"
	if c := Component(crd); c != "" {
		crd.Labels[componentLabel] = c
	}
	if opts.Version != "" {
		crd.Labels[versionLabel] = opts.Version
	}
	if opts.Instance != "" {
		crd.Labels[instanceLabel] = opts.Instance
	}
}

// Decode parses a multi-document YAML stream of CRDs.
func Decode(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	decoder := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var crds []*apiextensionsv1.CustomResourceDefinition
	for {
		var c apiextensionsv1.CustomResourceDefinition
		if err := decoder.Decode(&c); err != nil {
			if errors.Is(err, io.EOF) {
				return crds, nil
			}
			return nil, err
		}
		if c.Kind == "" {
			continue
		}
		if c.Kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("unexpected kind %q", c.Kind)
		}
		crds = append(crds, &c)
	}
}

// Names returns the names of the embedded CRD files, for tests that check
// every CRD has a counterpart.
func Names() ([]string, error) {
	files, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	for i, f := range files {
		files[i] = strings.TrimSuffix(path.Base(f), ".yaml")
	}
	return files, nil
}
