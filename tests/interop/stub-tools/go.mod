module golang.org/x/tools

go 1.17
