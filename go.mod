module github.com/crashsig/crashsig

go 1.26

require (
	github.com/go-delve/delve v1.27.2
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	go.yaml.in/yaml/v3 v3.0.6
)

require github.com/stretchr/testify v1.12.1
