# Smaller things found on a trial with an unseen data set (issue 9): each
# diagnostic and report says exactly what happened.

# check: an empty file says so, with the file name and no position.
: > empty.yaml
run 2 $RBA check empty.yaml
err_is "rebuild-audit: cannot check 'empty.yaml': empty file"
out_empty
printf '\n   \n# only a comment\n' > blank.yaml
run 2 $RBA check blank.yaml
err_is "rebuild-audit: cannot check 'blank.yaml': empty file"
run_in empty.yaml 2 $RBA check -
err_is "rebuild-audit: cannot check '-': empty file"
run 2 $RBA -S st register empty.yaml
err_is "rebuild-audit: invalid pins 'empty.yaml': empty file"
