package plugincmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Flux's plugin directory conventions.
const (
	// DirEnv overrides the plugin directory.
	DirEnv      = "FLUXCD_PLUGINS"
	fluxPrefix  = "flux-"
	weirPrefix  = "weir-"
	receiptTail = ".yaml"
)

// reserved names can never be plugins.
var reserved = map[string]bool{"plugin": true, "help": true}

// Dir returns the plugin directory: $FLUXCD_PLUGINS, else
// ~/.fluxcd/plugins; "" when neither can be known.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".fluxcd", "plugins")
}

// ensureDir returns Dir, creating the default one; a directory named by
// $FLUXCD_PLUGINS is the user's and must exist, as in flux.
func ensureDir() (string, error) {
	dir := Dir()
	if dir == "" {
		return "", errors.New("no plugin directory: set " + DirEnv)
	}
	if os.Getenv(DirEnv) == "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("creating the plugin directory: %w", err)
		}
	}
	return dir, nil
}

// Plugin is an executable found in the plugin directory.
type Plugin struct {
	Name string // "operator"
	Path string // the binary, weir-operator or flux-operator
}

// Discover lists the plugins of dir by name, leaving out builtins, reserved
// names, directories, broken links and files without an executable bit. A
// weir-NAME shadows a flux-NAME.
func Discover(dir string, builtins map[string]bool) []Plugin {
	if dir == "" {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	found := map[string]Plugin{}
	for _, e := range entries {
		name, weir := pluginName(e.Name())
		if name == "" || reserved[name] || builtins[name] || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		info, err := os.Stat(path)
		if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o111 == 0 {
			continue
		}
		if _, seen := found[name]; seen && !weir {
			continue
		}
		found[name] = Plugin{Name: name, Path: path}
	}
	out := make([]Plugin, 0, len(found))
	for _, p := range found {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// pluginName is the plugin a file name stands for, and whether it is a
// weir- one; "" for anything else (receipts included).
func pluginName(file string) (string, bool) {
	if strings.HasSuffix(file, receiptTail) {
		return "", false
	}
	for _, p := range []string{weirPrefix, fluxPrefix} {
		if n, ok := strings.CutPrefix(file, p); ok && validName.MatchString(n) {
			return n, p == weirPrefix
		}
	}
	return "", false
}

// Receipt records what `plugin install` put in the directory, in flux's
// format, so either CLI can update what the other installed.
type Receipt struct {
	Name        string   `json:"name"`
	Version     string   `json:"version"`
	InstalledAt string   `json:"installedAt"`
	Platform    Platform `json:"platform"`
}

func receiptPath(dir, name string) string { return filepath.Join(dir, fluxPrefix+name+receiptTail) }

// readReceipt returns the receipt of name, nil for a plugin put there by
// hand.
func readReceipt(dir, name string) *Receipt {
	data, err := os.ReadFile(receiptPath(dir, name))
	if err != nil {
		return nil
	}
	var r Receipt
	if yaml.Unmarshal(data, &r) != nil {
		return nil
	}
	return &r
}

func writeReceipt(dir string, r *Receipt, now time.Time) error {
	r.InstalledAt = now.UTC().Format(time.RFC3339)
	data, err := yaml.Marshal(r)
	if err != nil {
		return err
	}
	if err := os.WriteFile(receiptPath(dir, r.Name), data, 0o644); err != nil {
		return fmt.Errorf("writing the plugin receipt: %w", err)
	}
	return nil
}

// uninstall removes name's binaries (weir- and flux-) and its receipt.
func uninstall(dir, name string) error {
	removed := false
	for _, p := range []string{weirPrefix, fluxPrefix} {
		err := os.Remove(filepath.Join(dir, p+name))
		switch {
		case err == nil:
			removed = true
		case !errors.Is(err, fs.ErrNotExist):
			return fmt.Errorf("failed to remove plugin binary: %w", err)
		}
	}
	if !removed {
		return fmt.Errorf("plugin %q is not installed", name)
	}
	if err := os.Remove(receiptPath(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("failed to remove plugin receipt: %w", err)
	}
	return nil
}
