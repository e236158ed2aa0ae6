package plugincmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Flux's catalog names and its location.
const (
	DefaultCatalog = "https://github.com/fluxcd/plugins/releases/latest/download/"
	// CatalogEnv overrides DefaultCatalog: a base URL ending in "/".
	CatalogEnv  = "FLUXCD_PLUGIN_CATALOG"
	apiVersion  = "cli.fluxcd.io/v1beta1"
	kindPlugin  = "Plugin"
	kindCatalog = "PluginCatalog"
	// maxDocumentSize bounds a catalog or manifest read.
	maxDocumentSize = 10 << 20
)

// Manifest is one plugin's NAME.yaml in the catalog.
type Manifest struct {
	APIVersion  string    `json:"apiVersion"`
	Kind        string    `json:"kind"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Homepage    string    `json:"homepage,omitempty"`
	Source      string    `json:"source,omitempty"`
	Bin         string    `json:"bin"`
	Versions    []Version `json:"versions"`
}

// Version is one release of a plugin, newest first in Manifest.Versions.
type Version struct {
	Version   string     `json:"version"`
	Platforms []Platform `json:"platforms"`
}

// Platform is the archive of one version for one os/arch.
type Platform struct {
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	URL      string `json:"url"`
	Checksum string `json:"checksum"`
	// ExtractPath is the binary's path inside the archive when it is not
	// found by its base name.
	ExtractPath string `json:"extractPath,omitempty"`
}

// Catalog is catalog.yaml: what `plugin search` lists.
type Catalog struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Plugins    []CatalogEntry `json:"plugins"`
}

// CatalogEntry is one plugin in catalog.yaml.
type CatalogEntry struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Homepage    string `json:"homepage,omitempty"`
	Source      string `json:"source,omitempty"`
	License     string `json:"license,omitempty"`
}

// validName is what a plugin name may hold: it becomes part of a URL and
// of file names.
var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// client reads the catalog at base.
type client struct {
	base string
	http *http.Client
}

func newClient(h *http.Client) *client {
	base := DefaultCatalog
	if env := os.Getenv(CatalogEnv); env != "" {
		base = env
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return &client{base: base, http: h}
}

func (c *client) fetch(ctx context.Context, file string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+file, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d from %s", resp.StatusCode, c.base+file)
	}
	return io.ReadAll(io.LimitReader(resp.Body, maxDocumentSize))
}

// manifest fetches NAME.yaml, in flux's words when it fails.
func (c *client) manifest(ctx context.Context, name string) (*Manifest, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("plugin name %q is invalid: lower-case letters, digits and '-' only", name)
	}
	body, err := c.fetch(ctx, name+".yaml")
	if err != nil {
		return nil, fmt.Errorf("plugin %q not found in catalog", name)
	}
	var m Manifest
	if err := yaml.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("failed to parse plugin manifest for %q: %w", name, err)
	}
	if m.APIVersion != apiVersion {
		return nil, fmt.Errorf("plugin %q has unsupported apiVersion %q (expected %q)", name, m.APIVersion, apiVersion)
	}
	if m.Kind != kindPlugin {
		return nil, fmt.Errorf("plugin %q has unexpected kind %q (expected %q)", name, m.Kind, kindPlugin)
	}
	if m.Name == "" {
		m.Name = name
	}
	return &m, nil
}

// catalog fetches catalog.yaml.
func (c *client) catalog(ctx context.Context) (*Catalog, error) {
	body, err := c.fetch(ctx, "catalog.yaml")
	if err != nil {
		return nil, fmt.Errorf("failed to fetch plugin catalog: %w", err)
	}
	var cat Catalog
	if err := yaml.Unmarshal(body, &cat); err != nil {
		return nil, fmt.Errorf("failed to parse plugin catalog: %w", err)
	}
	if cat.APIVersion != apiVersion {
		return nil, fmt.Errorf("plugin catalog has unsupported apiVersion %q (expected %q)", cat.APIVersion, apiVersion)
	}
	if cat.Kind != kindCatalog {
		return nil, fmt.Errorf("plugin catalog has unexpected kind %q (expected %q)", cat.Kind, kindCatalog)
	}
	return &cat, nil
}

// resolve picks the version asked for: the newest when version is empty,
// the one whose archive for goos/goarch has that checksum when version is
// a "sha256:" digest, else the one of that name.
func resolve(m *Manifest, version, goos, goarch string) (*Version, *Platform, error) {
	if len(m.Versions) == 0 {
		return nil, nil, fmt.Errorf("plugin %q has no versions", m.Name)
	}
	var v *Version
	switch {
	case version == "":
		v = &m.Versions[0]
	case strings.HasPrefix(version, "sha256:"):
		for i := range m.Versions {
			if p := platformOf(&m.Versions[i], goos, goarch); p != nil && p.Checksum == version {
				return &m.Versions[i], p, nil
			}
		}
		return nil, nil, fmt.Errorf("digest %q not found for plugin %q on %s/%s", version, m.Name, goos, goarch)
	default:
		for i := range m.Versions {
			if m.Versions[i].Version == version {
				v = &m.Versions[i]
			}
		}
		if v == nil {
			return nil, nil, fmt.Errorf("version %q not found for plugin %q", version, m.Name)
		}
	}
	p := platformOf(v, goos, goarch)
	if p == nil {
		return nil, nil, fmt.Errorf("plugin %q v%s has no binary for %s/%s", m.Name, v.Version, goos, goarch)
	}
	return v, p, nil
}

func platformOf(v *Version, goos, goarch string) *Platform {
	for i := range v.Platforms {
		if v.Platforms[i].OS == goos && v.Platforms[i].Arch == goarch {
			return &v.Platforms[i]
		}
	}
	return nil
}
