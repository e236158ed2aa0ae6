package web

import (
	"embed"
	"io/fs"
)

//go:embed assets
var assets embed.FS

// FS returns the UI's static files rooted at the directory served at "/":
// index.html, app.css and the ES modules under js/.
func FS() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the directory is embedded above: cannot happen
	}
	return sub
}
