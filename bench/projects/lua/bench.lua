-- A loop-heavy Lua workload for cachefit (issues 26 and 27): one long luaV_execute
-- (the main chunk: Lua-to-Lua calls stay in it) with nested luaV_execute invocations
-- wherever C calls back into Lua (table.sort comparators, __index/__lt metamethods,
-- string.gsub with a function, pcall, coroutines: each its own lua_State).
-- Usage: lua bench.lua [SCALE]   (SCALE 1 runs about 2 s on a plain -O2 build here)
local scale = tonumber(arg and arg[1]) or 1
local N = math.floor(20000 * scale)
local checksum = 0

-- 1. recursive calls: CallInfo chains (luaD_precall for every call)
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
for _ = 1, 3 * scale do checksum = checksum + fib(22) end

-- 2. tables with string keys (luaH_getshortstr, luaH_newkey), records and arrays
local objs = {}
for i = 1, N do
  objs[i] = { id = i, name = "obj" .. (i % 97), x = i * 0.5, y = i % 13, tags = { i % 7 } }
end
local sum = 0
for round = 1, 10 do
  for i = 1, N do
    local o = objs[i]
    o.x = o.x + o.y * round
    sum = sum + o.x + #o.tags
  end
end
checksum = checksum + sum % 1000003

-- 3. table.sort with a Lua comparator: a luaV_execute per comparison, inside sort (C)
for _ = 1, 2 do
  local a = {}
  for i = 1, N do a[i] = objs[(i * 7919) % N + 1] end
  table.sort(a, function(p, q) return p.x < q.x end)
  checksum = checksum + a[1].id
end

-- 4. metatables: __index and __add functions, method calls
local Vec = {}
Vec.__index = function(t, k) return rawget(Vec, k) or 0 end
Vec.__add = function(p, q) return setmetatable({ p[1] + q[1], p[2] + q[2] }, Vec) end
function Vec.len2(v) return v[1] * v[1] + v[2] * v[2] end
local acc = setmetatable({ 0, 0 }, Vec)
for i = 1, 3 * N do
  acc = acc + setmetatable({ i % 5, i % 3 }, Vec)
  if acc.missing ~= 0 then error("bad __index") end
end
checksum = checksum + acc:len2() % 1000003

-- 5. strings: gsub with a function, concatenation, string keys made at run time
local words = {}
for i = 1, N // 4 do
  local s = ("k%d=v%d;"):rep(8):format(i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i)
  s = s:gsub("(%w+)=(%w+)", function(k, v) return v .. ":" .. k end)
  words[s:sub(1, 12)] = (words[s:sub(1, 12)] or 0) + 1
end
for k, v in pairs(words) do checksum = checksum + #k + v end

-- 6. coroutines (each a lua_State of its own) and pcall
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
for j = 1, N // 50 do
  for v in gen(100) do checksum = checksum + v % 7 end
  local ok, e = pcall(function() error({ code = j }) end)
  if ok or e.code ~= j then error("pcall") end
end

print(string.format("checksum %.0f", checksum))
