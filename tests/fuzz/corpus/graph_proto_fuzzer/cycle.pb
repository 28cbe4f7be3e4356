
x @
a @
c @
aAddxc"a
bRelua"c"x*c