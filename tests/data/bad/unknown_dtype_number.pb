
x @
yc
aRelux"y"x*y