module github.com/crashsig/crashsig

go 1.26.0

require (
	github.com/go-delve/delve v1.27.2
	github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724
	go.yaml.in/yaml/v3 v3.0.6
)

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
	github.com/klauspost/compress v1.20.4
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3
	github.com/stretchr/testify v1.12.1
	github.com/ulikunitz/xz v0.5.17
	golang.org/x/net v0.59.0
)

require (
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	golang.org/x/text v0.42.0 // indirect
)
